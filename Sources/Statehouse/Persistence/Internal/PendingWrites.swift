import Foundation
import Synchronization

/// The persisted containers and stores with a writer, to flush at a normal exit of the process.
final class PendingWrites: Sendable {
    static let shared = PendingWrites()

    private let flushers = Locked<[ObjectIdentifier: @Sendable () -> Void]>([:])
    private let installed = Atomic<Bool>(false)

    func register(_ persistence: some StatePersistenceFlushing) {
        if !installed.exchange(true, ordering: .relaxed) {
            atexit { PendingWrites.shared.flushAll() }
        }
        flushers.withLock { $0[ObjectIdentifier(persistence)] = { [weak persistence] in persistence?.flushAtExit() } }
    }

    func unregister(_ persistence: some StatePersistenceFlushing) {
        _ = flushers.withLock { $0.removeValue(forKey: ObjectIdentifier(persistence)) }
    }

    func flushAll() {
        for flush in flushers.withLock({ Array($0.values) }) { flush() }
    }
}

/// A persistence that can write what is pending at exit.
protocol StatePersistenceFlushing: AnyObject, Sendable {
    func flushAtExit()
}
