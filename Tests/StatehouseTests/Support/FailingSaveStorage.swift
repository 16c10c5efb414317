import Foundation
import Synchronization
@testable import Statehouse

/// An in-memory storage whose saves fail while told to, and that can run a hook inside its next failing save (on
/// the thread that saves, before the failure is thrown).
final class FailingSaveStorage: StateStorage {
    private struct Entries: Sendable {
        var data: [String: Data] = [:]
        var failing = false
        var failures = 0

        /// Stores `newData` unless failing; returns whether it failed.
        mutating func save(_ newData: Data, key: String) -> Bool {
            if failing {
                failures += 1
                return true
            }
            data[key] = newData
            return false
        }
    }

    private let entries = Locked(Entries())
    private let failureHook = Locked<(@Sendable () -> Void)?>(nil)

    init() {}

    var failing: Bool {
        get { entries.withLock { $0.failing } }
        set { entries.withLock { $0.failing = newValue } }
    }

    var failures: Int {
        entries.withLock { $0.failures }
    }

    /// Runs `body` inside the next failing save, once.
    func onNextFailure(_ body: @escaping @Sendable () -> Void) {
        failureHook.withLock { $0 = body }
    }

    private func takeFailureHook() -> (@Sendable () -> Void)? {
        failureHook.withLock { slot in
            let taken = slot
            slot = nil
            return taken
        }
    }

    func load(key: String) throws -> Data? {
        entries.withLock { $0.data[key] }
    }

    func remove(key: String) throws {
        _ = entries.withLock { $0.data.removeValue(forKey: key) }
    }

    func save(_ data: Data, key: String) throws {
        guard entries.withLock({ $0.save(data, key: key) }) else { return }
        takeFailureHook()?()
        throw StorageError(.io, key: key, message: "No space left on device (simulated).")
    }
}
