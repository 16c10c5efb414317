import Foundation

/// The rules for a project's name: what is stored, and the key that makes names unique ignoring case.
public struct ProjectName: Equatable, Sendable {
    /// The longest name, in characters.
    public static let maximumLength = 200

    /// The name as shown: trimmed, in Unicode's composed form (so that "é" typed two ways is one name).
    public let display: String
    /// What uniqueness is checked on: the display name, lowercased.
    public let key: String

    /// Applies the rules to what the user typed.
    public init(_ raw: String) throws(TrackerError) {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        guard !name.isEmpty else { throw .emptyName }
        guard name.count <= Self.maximumLength else { throw .nameTooLong }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .nameHasControlCharacters
        }
        display = name
        key = Self.key(for: name)
    }

    /// The uniqueness key of any string: how the CLI finds a project by the name the user typed.
    public static func key(for name: String) -> String {
        name.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping.lowercased()
    }
}
