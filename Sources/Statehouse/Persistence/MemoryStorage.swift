import Foundation

/// Keeps state in memory: for tests, previews, and state that need not outlive the process.
public final class MemoryStorage: StateStorage {
    private let entries = Locked<[String: Data]>([:])

    public init() {}

    public func load(key: String) throws -> Data? {
        entries.withLock { $0[key] }
    }

    public func save(_ data: Data, key: String) throws {
        entries.withLock { $0[key] = data }
    }

    public func remove(key: String) throws {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    /// Every key with stored data.
    public var keys: [String] {
        entries.withLock { Array($0.keys) }
    }
}

extension StateStorage where Self == MemoryStorage {
    /// A new, empty in-memory storage.
    public static var memory: MemoryStorage { MemoryStorage() }
}
