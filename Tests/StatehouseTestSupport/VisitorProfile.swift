import Foundation
import Statehouse

/// A state stored in three shapes over its history, shared by the migration tests and the helper process that
/// plays the other side. Version 1 stored `{"name": …}`, version 2 added `"visits"`, version 3 renamed `name` to
/// `fullName`.
public struct VisitorProfile: VersionedState, Equatable, Sendable {
    public static let version = 3

    public var fullName: String
    public var visits: Int

    public init(fullName: String, visits: Int) {
        self.fullName = fullName
        self.visits = visits
    }

    public static func migrate(from version: Int, data: Data) throws -> VisitorProfile {
        struct Version2: Decodable {
            var name: String
            var visits: Int?
        }
        // Versions 0 (before versioning) and 1 had no visits; version 2 had them under the same name.
        let old = try JSONDecoder().decode(Version2.self, from: data)
        return VisitorProfile(fullName: old.name, visits: old.visits ?? 0)
    }
}

public enum VisitorAction: Sendable, Equatable {
    case visit
    case rename(String)
}

public func visitorReducer(_ profile: inout VisitorProfile, _ action: VisitorAction) {
    switch action {
    case .visit: profile.visits += 1
    case .rename(let name): profile.fullName = name
    }
}
