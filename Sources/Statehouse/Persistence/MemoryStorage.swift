import Foundation

/// Keeps state in memory: for previews and state that need not outlive the process. Tests of code that persists
/// use StatehouseTesting's `InMemoryStorage`, which can also fail, stall and change from outside on cue.
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
