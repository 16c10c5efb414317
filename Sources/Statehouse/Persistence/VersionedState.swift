import Foundation

/// A persisted value whose stored shape changes between versions of the app.
///
/// ```swift
/// struct Settings: VersionedState {
///     static let version = 2
///     var theme: String
///     var fontSize: Int                                  // new in version 2
///
///     static func migrate(from version: Int, data: Data) throws -> Settings {
///         // Versions 0 (stored before versioning) and 1 had only the theme.
///         struct Old: Decodable { var theme: String }
///         return Settings(theme: try JSONDecoder().decode(Old.self, from: data).theme, fontSize: 12)
///     }
/// }
/// ```
///
/// A persisted container of a `VersionedState` stores `{"version": …, "value": …}`. Loading data of the current
/// version decodes it; older data (and data stored before the type was versioned, as version 0) goes through
/// ``migrate(from:data:)`` and is written back in the current shape at the next save. Data of a *newer* version
/// (the app was downgraded) is treated like undecodable data: the container starts from its default and the data is
/// kept aside, never overwritten.
public protocol VersionedState: Codable {
    /// The version of the stored shape that this code writes; raise it when the shape changes.
    static var version: Int { get }

    /// Makes a value from `data`, the JSON this type stored at an older `version` (0: before it was versioned).
    static func migrate(from version: Int, data: Data) throws -> Self
}

/// The stored form of a ``VersionedState``.
struct VersionedEnvelope<Value: Encodable>: Encodable {
    let version: Int
    let value: Value
}

/// Decoding stored data of a ``VersionedState``, whatever version wrote it.
enum VersionedDecoding {
    struct NewerVersion: Error, CustomStringConvertible {
        let stored: Int
        let current: Int
        var description: String {
            "it was written by version \(stored) of the type, and this code knows up to version \(current)"
        }
    }

    static func decode<Value: VersionedState>(_ type: Value.Type, from data: Data) throws -> Value {
        let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        guard let envelope = object as? [String: Any], envelope.count == 2,
            let version = envelope["version"] as? Int, let value = envelope["value"]
        else {
            return try Value.migrate(from: 0, data: data)
        }
        let valueData = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
        if version == Value.version { return try JSONDecoder().decode(Value.self, from: valueData) }
        if version > Value.version { throw NewerVersion(stored: version, current: Value.version) }
        return try Value.migrate(from: version, data: valueData)
    }
}

extension StateContainer where Value: VersionedState {
    /// Creates a persisted container of a versioned value: stored in its versioned envelope, migrated when older.
    /// Everything else is as for any persisted container; see ``VersionedState``.
    public convenience init(
        _ defaultValue: Value,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .watch
    ) {
        self.init(
            defaultValue, key: key, storage: storage, codec: .versioned, writes: writes,
            externalChanges: externalChanges
        )
    }
}
