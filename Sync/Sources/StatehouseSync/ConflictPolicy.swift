import Foundation

/// What a ``RemoteStorage`` does with a local write that the server's value has moved on from: a write made offline,
/// or by `modify`, on a value another app has since replaced.
///
/// A container's `update` made while the server can be reached is a transaction on the server's value whatever
/// the policy: its body runs on the newest value, and again on a newer one if another write came first. The policy
/// is for the writes that could not be such a transaction.
public struct ConflictPolicy: Sendable {
    /// The bytes a conflict leaves to push: from the value the write was made on (`nil`: none), the local write
    /// (`nil`: a removal) and the server's value (`nil`: none); `nil` from the policy drops the local write.
    let resolve: @Sendable (_ base: Data?, _ local: Data?, _ remote: Data?) -> Resolution

    enum Resolution: Equatable {
        /// Push this (`nil`: remove) on the server's value.
        case push(Data?)
        /// Keep the server's value; the local write is dropped.
        case takeRemote
    }

    /// `update` runs again on the newer value while the server can be reached; a write that could not (made offline,
    /// or by `modify`) replaces the server's value, as `modify` does on SQLite and PostgreSQL: the last write wins.
    /// The default.
    public static let rerunUpdate = ConflictPolicy { _, local, _ in .push(local) }

    /// The server's value wins: a local write that meets a newer value is dropped, and the container takes the
    /// server's value.
    public static let serverWins = ConflictPolicy { _, _, _ in .takeRemote }

    /// The value `merge` makes from the value the local write was made on (`nil` when the server held none), the
    /// local value and the server's newer one is written instead. A removal on either side wins over the merge, and
    /// bytes that do not decode as `Value` (written by another version of the app) leave the server's value.
    ///
    /// ```swift
    /// RemoteStorage(server: url, token: token, cache: folder,
    ///               conflicts: .merge(Settings.self) { base, local, remote in
    ///                   var merged = remote
    ///                   if local.theme != base?.theme { merged.theme = local.theme }
    ///                   return merged
    ///               })
    /// ```
    public static func merge<Value: Codable & Sendable>(
        _ type: Value.Type, _ merge: @escaping @Sendable (_ base: Value?, _ local: Value, _ remote: Value) -> Value
    ) -> ConflictPolicy {
        ConflictPolicy { base, local, remote in
            guard let local else { return .push(nil) }
            guard let remote else { return .takeRemote }
            let decoder = JSONDecoder()
            guard let localValue = try? decoder.decode(Value.self, from: local),
                let remoteValue = try? decoder.decode(Value.self, from: remote)
            else { return .takeRemote }
            let baseValue = base.flatMap { try? decoder.decode(Value.self, from: $0) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            guard let merged = try? encoder.encode(merge(baseValue, localValue, remoteValue)) else { return .takeRemote }
            return .push(merged)
        }
    }
}
