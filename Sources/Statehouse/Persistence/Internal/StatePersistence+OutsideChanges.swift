import Dispatch

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
        following.withLock { $0 = Following(owner: owner) }
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
        guard let changeDetecting, let owner = following.withLock({ $0?.owner }) else { return }
        guard let count = owner.currentChangeCount() else {
            // The owner's lock is held, and waiting for it here could deadlock with a flush made under it: ask
            // again shortly, rather than leave a notified change to the safety net.
            let delay = machine.withLock { $0.ownerWasBusy() }
            Task.detached { [weak self, clock] in
                try? await clock.sleep(for: delay)
                self?.requestCheck()
            }
            return
        }
        // The fingerprint alone first: it is cheap, and most checks (this process's own writes, another key of the
        // same database) end there.
        guard let quick = try? changeDetecting.fingerprint(key: key),
            machine.withLock({ $0.isWorthReading(ownerCount: count, fingerprint: quick) }),
            let (data, fingerprint) = try? changeDetecting.loadWithFingerprint(key: key),
            machine.withLock({ $0.shouldReload(ownerCount: count, fingerprint: fingerprint) }),
            let data, let value = try? codec.decode(data)
        else { return }
        applier.async {
            owner.takeStoredValue(value, ifUnchangedSince: count) { [weak self] in
                guard let self else { return }
                // Forgotten, so that the next check reads the key again: it may hold a newer value than the one
                // refused, which no notification will announce again.
                writer.async { self.machine.withLock { $0.refused(fingerprint) } }
                requestCheck()
            }
        }
    }
}
