import Dispatch
import Foundation

/// Following the changes others make: ``PersistenceMachine`` decides, this carries it out.
///
/// Every way a change can be noticed — the storage's notification, a poll, a retry — only *asks* for a check; the
/// machine coalesces the requests into one check queued on the writer, which compares the key's fingerprint and
/// reloads if it differs. A burst of a thousand notifications therefore costs a few checks, and the last value is
/// always read: a request made while a check runs queues another.
extension StatePersistence {
    /// Follows outside changes for `owner`, as ``externalChanges`` asks and the storage allows.
    func startFollowing(_ owner: some PersistenceOwner<Value>) {
        let plan = PersistenceMachine<Value>.following(
            externalChanges, canDetect: changeDetecting != nil, canNotify: storage is any ChangeNotifyingStorage
        )
        guard plan != .none, let changeDetecting else { return }
        writer.sync {
            let initial = try? changeDetecting.fingerprint(key: key)
            machine.withLock { $0.startsFollowing(from: initial) }
        }
        following.withLock { $0 = Following(owner: owner, readChangeCount: owner.changeCountReader()) }
        let interval: Duration
        switch plan {
        case .none:
            return
        case .poll(let every):
            interval = every
        case .watch(let safetyNet):
            interval = watch(safetyNet: safetyNet)
        }
        let checks = Task.detached { [weak self, clock] in
            while (try? await clock.sleep(for: interval)) != nil {
                guard let self else { return }
                requestCheck()
            }
        }
        following.withLock { $0?.checks = checks }
    }

    /// Starts the storage's notifications; returns the interval to poll at: the safety net's, or the polling rate
    /// if watching failed (which is reported).
    private func watch(safetyNet: Duration) -> Duration {
        guard let notifying = storage as? any ChangeNotifyingStorage else { return safetyNet }
        do {
            let watch = try notifying.watchChanges(of: key) { [weak self] in self?.requestCheck() }
            following.withLock { $0?.watch = watch }
            // A change between the initial fingerprint and the start of the notifications told nobody.
            requestCheck()
            return safetyNet
        } catch {
            let interval = PersistenceMachine<Value>.pollingInstead(of: safetyNet)
            StatehouseDiagnostics.report(.watchingUnavailable(key: key, reason: error.message, pollingEvery: interval))
            return interval
        }
    }

    func stopFollowing() {
        guard let ended = following.withLock({ $0 }) else { return }
        ended.checks?.cancel()
        ended.watch?.cancel()
    }

    /// Queues a check on the writer, unless one is queued already.
    func requestCheck() {
        guard machine.withLock({ $0.checkRequested() }) else { return }
        writer.async { self.checkForOutsideChange() }
    }

    /// Runs on `writer`: reloads the key if someone else changed it. The owner takes the value only if it has not
    /// changed since a moment when no local change was pending: a local change made at any point in between is
    /// newer, wins, and will overwrite the stored value.
    private func checkForOutsideChange() {
        machine.withLock { $0.checkStarts() }
        // The check never holds the owner across the storage's reads, and a container's count is read without it
        // (see `PersistenceOwner.changeCountReader()`): an owner whose last reference goes meanwhile ends on the
        // thread that let it go, which writes what is pending and frees the key before it goes on, instead of here
        // once the check is over (where a new container of the key, made meanwhile, would be reported a duplicate).
        guard let changeDetecting, let readChangeCount = following.withLock({ $0?.readChangeCount }) else { return }
        let count: UInt64
        switch readChangeCount() {
        case .count(let ownerCount):
            count = ownerCount
        case .ended:
            return
        case .busy:
            // Waiting for the owner's lock here could deadlock with a flush made under it: ask again shortly,
            // rather than leave a notified change to the safety net.
            let delay = machine.withLock { $0.ownerWasBusy() }
            Task.detached { [weak self, clock] in
                try? await clock.sleep(for: delay)
                self?.requestCheck()
            }
            return
        }
        let found: OutsideValue
        do {
            found = try outsideValue(in: changeDetecting, ownerCount: count)
        } catch {
            let number = machine.withLock { $0.checkFailed(error) }
            DispatchQueue.global().async { self.report(.checkFailed(error, number: number)) }
            return
        }
        if let number = machine.withLock({ $0.checkSucceeded(tookValue: found.isValue) }) {
            DispatchQueue.global().async { self.report(.withdrawn(number: number)) }
        }
        switch found {
        case .nothing:
            return
        case .ownerCountWentStale:
            requestCheck()
        case .value(let value, let fingerprint):
            applier.async { [weak self] in
                guard let owner = self?.following.withLock({ $0?.owner }) else { return }
                owner.takeStoredValue(value, ifUnchangedSince: count) { [weak self] in
                    guard let self else { return }
                    // Forgotten, so that the next check reads the key again: it may hold a newer value than the one
                    // refused, which no notification will announce again. Asked for only once forgotten: a check
                    // queued before would find the fingerprint known, and take this request for its own.
                    writer.async {
                        self.machine.withLock { $0.refused(fingerprint) }
                        self.requestCheck()
                    }
                }
            }
        }
    }

    /// What a check found under the key.
    private enum OutsideValue {
        /// A value someone else stored, to take.
        case value(Value, fingerprint: StorageFingerprint)
        /// Nothing to take: nothing changed, a local change is pending, or the change says nothing about the value.
        case nothing
        /// The owner's count the check read went stale while it ran (see ``PersistenceMachine/CheckStep/again``).
        case ownerCountWentStale

        var isValue: Bool {
            if case .value = self { true } else { false }
        }
    }

    /// Runs on `writer`: the value someone else stored, if there is one to take.
    ///
    /// - Throws: `StorageError`: the key could not be read, or what is stored does not decode (then a copy is
    ///   kept aside, and this process's next write replaces it; if no copy could be kept, writes wait until one is).
    private func outsideValue(
        in changeDetecting: any ChangeDetectingStorage, ownerCount count: UInt64
    ) throws(StorageError) -> OutsideValue {
        // The fingerprint alone first: it is cheap, and most checks (this process's own writes, another key of the
        // same database) end there.
        let read: (data: Data?, fingerprint: StorageFingerprint)
        do {
            let quick = try changeDetecting.fingerprint(key: key)
            switch machine.withLock({ $0.isWorthReading(ownerCount: count, fingerprint: quick) }) {
            case .go: break
            case .stop: return .nothing
            case .again: return .ownerCountWentStale
            }
            read = try changeDetecting.loadWithFingerprint(key: key)
        } catch {
            throw outsideReadError(error)
        }
        switch machine.withLock({ $0.shouldReload(ownerCount: count, fingerprint: read.fingerprint) }) {
        case .go: break
        case .stop: return .nothing
        case .again: return .ownerCountWentStale
        }
        // A removal says nothing about the value, where nothing stored is no value.
        guard let data = read.data else {
            return codec.whenRemoved.map { .value($0, fingerprint: read.fingerprint) } ?? .nothing
        }
        do {
            return .value(try codec.decode(data), fingerprint: read.fingerprint)
        } catch {
            throw undecodableOutsideData(data, error: error)
        }
    }

    private func outsideReadError(_ error: any Error) -> StorageError {
        let typed = error as? StorageError
        return StorageError(typed?.kind ?? .io, key: key, operation: typed?.operation ?? .load, message: """
            Could not read what others stored under \(String(reflecting: key)): \(typed?.message ?? "\(error).") \
            The value here stays as it is, and the key is read again at the next notification or poll.
            """, cause: typed?.cause ?? error, keptAside: typed?.keptAside)
    }

    /// Keeps a copy of `data` aside, as at load: this process's next write replaces it under the key. If no copy
    /// can be kept, the error says so (`keptAside` is `nil`), and writes wait until one is.
    func undecodableOutsideData(_ data: Data, error: any Error) -> StorageError {
        let kept = storage.keepAside(data, from: key)
        let reason = kept.failure.map { "\($0)" } ?? ""
        let what = kept.key.map { "a copy is kept under \(String(reflecting: $0))" }
            ?? "no copy could be kept aside (\(reason)), so nothing is written over it until one is"
        return StorageError(.undecodable, key: key, operation: .decode, message: """
            Another process stored data under \(String(reflecting: key)) that is not a \(Value.self): \
            \(CodingFailure.describe(error)). \
            The value here stays as it is; \(what). Is another version of the program writing this key?
            """, cause: error, keptAside: kept.key)
    }
}
