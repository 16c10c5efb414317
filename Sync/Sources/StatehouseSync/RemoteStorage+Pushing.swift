import Foundation
import Statehouse
import Synchronization

extension RemoteStorage {
    /// How a key's pending write fared.
    enum PushOutcome {
        /// The server holds it, or it was dropped for the server's value (``ConflictPolicy/serverWins``).
        case done
        case failed(SyncError)
    }

    /// A key written this often elsewhere while a push or an update runs waits for the next try.
    static let conflictRounds = 16

    /// Pushes every pending write on the push queue, soon; asking again before it ran asks once.
    func schedulePush() {
        guard pushScheduled.withLock({ scheduled in
            defer { scheduled = true }
            return !scheduled
        }) else { return }
        pushing.async { [weak self] in self?.pushAll() }
    }

    private func pushAll() {
        pushScheduled.withLock { $0 = false }
        var failure: SyncError?
        for key in cache.pendingKeys {
            writing.lock()
            let outcome = pushPending(key)
            writing.unlock()
            if case .failed(let error) = outcome { failure = failure ?? error }
        }
        if let failure { retryLater(failure) } else { reached() }
    }

    /// The server answered.
    func reached() {
        backoff.withLock { $0.reset() }
        updateHealth { $0.reached() }
    }

    /// Shows `failure`, and pushes again after the next back-off.
    func retryLater(_ failure: SyncError) {
        let delay = backoff.withLock { $0.next() }
        updateHealth { $0.failed(failure, retryingIn: delay) }
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        pushing.asyncAfter(deadline: .now() + seconds) { [weak self] in self?.schedulePush() }
    }

    /// Pushes `key`'s pending write until the server holds it or the policy dropped it. Call with `writing` held.
    func pushPending(_ key: String) -> PushOutcome {
        for _ in 0..<Self.conflictRounds {
            let pending: RemoteEntry.PendingWrite
            do {
                guard let found = try cache.entry(key).pending else { return .done }
                pending = found
            } catch {
                return .failed(.outboxNotSaved("\(error)"))
            }
            // A push whose answer was lost is pushed again: it meets 412, and its own bytes on the server settle it.
            switch connection.write(key, pending.value, replacing: (pending.base, pending.baseValue)) {
            case .stored(let version):
                guard record(key, { $0.stored(pending.value, version: version, pushing: pending.number) }) else {
                    return .failed(.outboxNotSaved("The cache of \(key) cannot be written."))
                }
            case .conflict:
                switch connection.read(key) {
                case .success(let remote):
                    guard record(key, { $0.resolve(against: remote.value, version: remote.version, with: policy) }) else {
                        return .failed(.outboxNotSaved("The cache of \(key) cannot be written."))
                    }
                case .failure(let error):
                    return .failed(error)
                }
            case .notSent(let error), .failed(let error):
                return .failed(error)
            }
        }
        return .failed(.unreachable("The value of \(key) changed on the server faster than this app could push its own."))
    }

    /// Runs `transform` on the server's newest value and writes its result in place of that version only, again
    /// when another write came first; on the local value when the server cannot be reached.
    func transaction(_ key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        writing.lock()
        defer { writing.unlock() }
        let offlineNow = health.withLock { $0.offline != nil }
        // A local write still waiting goes first: pushed after the transaction, it would replace what the
        // transaction stored. Offline, the update goes on top of it, as a local write too.
        if try cache.entry(key).pending != nil {
            if offlineNow { return try write(try transform(cache.entry(key).visible), key: key) }
            if case .failed(let error) = pushPending(key) { return try offline(key, transform, because: error) }
        }
        // Offline at the last try: a short wait for the first read, not a request's whole timeout at every update.
        let firstTimeout: TimeInterval? = offlineNow ? 1 : nil
        for round in 0..<Self.conflictRounds {
            let remote: ContainerConnection.Remote
            switch connection.read(key, timeout: round == 0 ? firstTimeout : nil) {
            case .success(let read): remote = read
            case .failure(let error): return try offline(key, transform, because: error)
            }
            record(key) { $0.heard(remote.value, version: remote.version) }
            let result = try transform(remote.value)
            switch connection.write(key, result, replacing: (remote.version, remote.value)) {
            case .stored(let version):
                try cache.change(key) { $0.stored(result, version: version, pushing: nil) }
                reached()
                // What this transaction stored, which the container takes: a newer value the feed brought meanwhile
                // has another fingerprint, so the container's next check loads it.
                return StorageFingerprint.ofContent(result)
            case .conflict:
                continue
            case .notSent(let error):
                return try offline(key, transform, because: error)
            case .failed(let error) where !error.isPassing:
                throw StorageError(.io, key: key, operation: .transact, message: error.description)
            case .failed(let error):
                // Sent, and perhaps stored, or still on its way (a server stalled on its disk stores it later):
                // running it again, or keeping it as a local write, could apply it twice or over another app's
                // update. Nothing the client can read tells, so the update fails, not applied here.
                retryLater(error)
                throw StorageError(
                    .io, key: key, operation: .transact,
                    message: "The server may have stored the update, or not: its answer was lost (\(error)).",
                    cause: OutcomeUnknown()
                )
            }
        }
        throw StorageError(
            .io, key: key, operation: .transact,
            message: "The value changed on the server \(Self.conflictRounds) times while the update ran; try again."
        )
    }

    /// An update the server could not take before its write was sent: a local write when it cannot be reached
    /// (pushed later), an error when it refused (the write would never be pushed).
    private func offline(_ key: String, _ transform: (Data?) throws -> Data?, because error: SyncError) throws -> StorageFingerprint {
        retryLater(error)
        guard error.isPassing else { throw StorageError(.io, key: key, operation: .transact, message: error.description) }
        return try write(try transform(cache.entry(key).visible), key: key)
    }

    /// Changes `key`'s cache entry, and tells its watchers when the app's value changed. `false`: the cache could not
    /// be written, and nothing changed.
    @discardableResult
    func record(_ key: String, _ change: (inout RemoteEntry) -> Void) -> Bool {
        guard let (_, _, visibleChanged) = try? cache.change(key, change) else { return false }
        if visibleChanged { notify(key) }
        return true
    }
}
