import Foundation

/// Where persisted state lives: a map from keys to bytes.
///
/// ```swift
/// let settings = StateContainer(Settings(), key: "settings", storage: .file(directory: url))
/// ```
///
/// Any string is a valid key; a storage encodes it as it needs (a file storage never lets a key leave its directory).
/// Implementations must be safe to call from any thread; a container calls them from its writer and from `flush()`.
public protocol StateStorage: Sendable {
    /// The bytes stored under `key`, or `nil` if there are none.
    func load(key: String) throws -> Data?
    /// Stores `data` under `key`, replacing what was there. After it returns, the data survives a crash of the
    /// process (and, for storages that can promise it, of the machine).
    func save(_ data: Data, key: String) throws
    /// Removes what is stored under `key`; removing a key with nothing stored does nothing.
    func remove(key: String) throws
}

extension StateStorage {
    /// Keeps `data`, which could not be decoded from `key`, under a key of its own, so that it is not overwritten
    /// by the next save. Returns that key.
    func setAside(_ data: Data, from key: String) throws -> String {
        // The time orders the kept copies; the random part keeps two kept in the same millisecond (by two processes,
        // say) from overwriting each other.
        let asideKey = "\(key).undecodable.\(Int(Date().timeIntervalSince1970 * 1000))-\(UInt32.random(in: 0...UInt32.max))"
        try save(data, key: asideKey)
        return asideKey
    }

    /// Keeps `data` aside as ``setAside(_:from:)`` does: returns the key it is kept under, or `nil` and why not.
    func keepAside(_ data: Data, from key: String) -> (key: String?, failure: (any Error)?) {
        do {
            return (try setAside(data, from: key), nil)
        } catch {
            return (nil, error)
        }
    }
}
