import Foundation

/// A hosted container as the server holds it: its value (`nil` when nothing is stored) and its version, which rises
/// by one with every write and removal, so that a version names one value for good (its `ETag`).
package struct StoredContainer: Sendable, Equatable, Codable {
    /// Version 0: nothing was ever stored.
    package static let never = StoredContainer(version: 0, value: nil)

    package var version: Int64
    package var value: Data?

    package init(version: Int64, value: Data?) {
        self.version = version
        self.value = value
    }

    var exists: Bool { value != nil }

    /// The `ETag` of the version: a strong one, since a version's bytes never change.
    var entityTag: String { "\"\(version)\"" }
}

/// What a write to a container asks of its current version: the `If-Match` and `If-None-Match` headers (RFC 9110).
///
/// A write must name the version it replaces (`If-Match`), or say that it replaces nothing (`If-None-Match: *`): one
/// that does not could replace a value its client never saw, which is the lost update these headers exist to
/// prevent (the server answers 428). An `If-None-Match` listing versions names none it replaces, so alone it is not
/// enough.
package struct WriteCondition: Sendable, Equatable, Codable {
    package enum Tags: Sendable, Equatable, Codable {
        /// `*`: any current value.
        case any
        /// A list of entity tags, as the text between their quotes; weak ones are kept out of `If-Match`.
        case opaque([String])
    }

    var ifMatch: Tags?
    var ifNoneMatch: Tags?

    /// `nil` when the headers name no version the write replaces.
    init?(ifMatch: String?, ifNoneMatch: String?) {
        self.ifMatch = ifMatch.map { Self.tags($0, weakMatches: false) }
        self.ifNoneMatch = ifNoneMatch.map { Self.tags($0, weakMatches: true) }
        guard self.ifMatch != nil || self.ifNoneMatch == .any else { return nil }
    }

    /// Whether a write may replace `current`. `If-Match` uses the strong comparison and `If-None-Match` the weak
    /// one, as RFC 9110 says, both byte for byte (`"01"` is not `"1"`); neither matches a container with nothing
    /// stored, except `If-None-Match: *`'s absence.
    package func holds(for current: StoredContainer) -> Bool {
        if let ifMatch, !current.exists || !ifMatch.contain(current.version) { return false }
        if let ifNoneMatch, current.exists, ifNoneMatch.contain(current.version) { return false }
        return true
    }

    private static func tags(_ header: String, weakMatches: Bool) -> Tags {
        if header.trimmingCharacters(in: .whitespaces) == "*" { return .any }
        return .opaque(header.split(separator: ",").compactMap { element in
            var tag = element.trimmingCharacters(in: .whitespaces)[...]
            if weakMatches, tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            guard tag.count >= 2, tag.first == "\"", tag.last == "\"" else { return nil }
            return String(tag.dropFirst().dropLast())
        })
    }
}

extension WriteCondition.Tags {
    func contain(_ version: Int64) -> Bool {
        switch self {
        case .any: true
        case .opaque(let tags): tags.contains(String(version))
        }
    }
}
