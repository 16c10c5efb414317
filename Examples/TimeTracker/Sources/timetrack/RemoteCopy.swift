import Foundation
import Statehouse
import StatehouseSync
import Synchronization
import TimeTrackerCore

/// A command's tracker when it follows a server (`--remote URL`): a local copy (a database of its own) that every
/// command reads and writes as usual, kept in step with a `SyncedStore` of the server's tracker.
///
/// The copy holds the synced store's state: the server's contents with the actions it has not applied yet on top.
/// What a command applies to the copy is handed to the synced store, which queues it in its outbox (on disk before
/// the command reports) and pushes it; the server applies it with the same rules. Offline, the command works on the
/// copy and its actions wait. See ``TimeTracker/exchange(after:sending:)``.
final class RemoteCopy: Sendable {
    static let storeName = "tracker"

    let server: URL
    let tracker: TimeTracker
    let synced: SyncedStore<TrackerContents, SyncedTrackerAction>
    private let outbox: URL
    /// The copy's record, whose cursor is the copy's newest logged action handed to the outbox. Exchanges run one at
    /// a time (see ``follow()``).
    private let record: Mutex<CopyRecord>
    /// Why the server did not answer when the copy was opened; `nil` when it did.
    let openingFailure: SyncError?
    /// The outbox's number of this command's first action: refusals of earlier ones are news, not its failure.
    private let firstOwnAction = Mutex<Int64>(1)
    /// The contents the copy took at the last exchange: the actions applied since were applied to them, and their
    /// ids are theirs (the synced store's state may have moved on since, with the server's news).
    private let shown = Mutex<TrackerContents?>(nil)

    /// Whether the server could not be reached when the copy was opened: the copy shows what was last heard.
    var serverWasUnreachable: Bool {
        if case .unreachable? = openingFailure { true } else { false }
    }

    /// Opens the copy at `path` and its outbox beside it, and takes the server's state now if it answers within
    /// a few seconds.
    ///
    /// - Throws: ``NotACopy`` when `path` holds a database that is not a copy of `server`.
    static func open(server: URL, token: String, path: String, lockTimeout: Duration) async throws -> RemoteCopy {
        let outbox = URL(fileURLWithPath: path + ".outbox", isDirectory: true)
        let record = try Self.record(for: server, path: path, outbox: outbox)
        let synced = try await Self.syncedStore(server: server, token: token, outbox: outbox, path: path, waiting: lockTimeout)
        let failure = await Self.pull(synced, within: .seconds(5))
        let tracker = try TimeTracker(path: path, lockTimeout: lockTimeout)
        if let cursor = record.cursor, try tracker.newestLoggedActionID() < cursor { throw notTheCopy(path) }
        let copy = RemoteCopy(
            server: server, tracker: tracker, synced: synced, outbox: outbox, record: record, openingFailure: failure
        )
        // Hands over what an earlier command left (one killed before its outbox held its actions).
        try await copy.exchange()
        copy.firstOwnAction.withLock { $0 = synced.nextSequenceNumber }
        return copy
    }

    /// The copy's synced store, once no other command uses the copy (a copy has one outbox, which one process
    /// writes at a time), waiting for it as a change waits for a locked database.
    private static func syncedStore(
        server: URL, token: String, outbox: URL, path: String, waiting timeout: Duration
    ) async throws -> SyncedStore<TrackerContents, SyncedTrackerAction> {
        let deadline = ContinuousClock.now + timeout
        while true {
            do throws(SyncError) {
                return try SyncedStore(
                    name: storeName, initialState: TrackerContents(),
                    reducer: { (contents: inout TrackerContents, action: SyncedTrackerAction) -> Effect<SyncedTrackerAction> in
                        SyncedTrackerAction.reducer.reduce(&contents, action)
                    },
                    server: server.appendingPathComponent("sync/"), token: token, outbox: outbox
                )
            } catch {
                guard case .outboxInUse = error else { throw error }
                guard ContinuousClock.now < deadline else {
                    throw CopyInUse(description: """
                        Another timetrack command (a watch?) uses the copy \(path), and went on past the lock timeout: \
                        wait for it to end, or give this command another --db.
                        """)
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// The record of the copy at `path`: a new one for a database yet to be made; the one beside it if it copies
    /// `server`.
    private static func record(for server: URL, path: String, outbox: URL) throws -> CopyRecord {
        guard let record = try CopyRecord.read(in: outbox) else {
            guard !FileManager.default.fileExists(atPath: path) else {
                throw NotACopy(description: """
                    \(path) is a tracker of its own, not a copy of \(server.absoluteString): --remote would replace what \
                    it holds with the server's. Give --db a new path for the copy (or none: one is made per server).
                    """)
            }
            return CopyRecord(server: server.absoluteString, copy: UUID().uuidString, cursor: nil)
        }
        guard record.server == server.absoluteString else {
            throw NotACopy(description: """
                \(path) is a copy of \(record.server), not of \(server.absoluteString): give --db another path for this \
                server (or none: one is made per server).
                """)
        }
        guard FileManager.default.fileExists(atPath: path) else { throw notTheCopy(path) }
        return record
    }

    /// The copy's database was removed or replaced while its outbox stayed: a new database's log would give its
    /// actions the ids of actions the server applied already, which it would skip.
    private static func notTheCopy(_ path: String) -> NotACopy {
        NotACopy(description: """
            \(path) is not the copy its outbox (\(path).outbox) was kept for: it was removed or replaced. Put the copy \
            back, or remove \(path).outbox to start a new copy (the changes that wait in it are lost).
            """)
    }

    private init(
        server: URL, tracker: TimeTracker, synced: SyncedStore<TrackerContents, SyncedTrackerAction>, outbox: URL,
        record: CopyRecord, openingFailure: SyncError?
    ) {
        self.server = server
        self.tracker = tracker
        self.synced = synced
        self.outbox = outbox
        self.record = Mutex(record)
        self.openingFailure = openingFailure
    }

    /// Hands the synced store what was applied to the copy since the last exchange, makes the copy show the synced
    /// store's state, and records how far the outbox holds the copy's actions.
    ///
    /// - Throws: ``ChangeNotQueued`` when an action could not be queued (the outbox is full, or it is too large to
    ///   push): it is undone in the copy.
    func exchange() async throws {
        let (synced, before, base) = (synced, record.withLock { $0 }, shown.withLock { $0 })
        let notQueued = Mutex<ChangeNotQueued?>(nil)
        let taken = Mutex<TrackerContents?>(nil)
        let next = try await tracker.exchange(after: before.cursor) { entries in
            // What each action was applied to in the copy, followed as the copy's rules followed it. After a command
            // killed before its exchange, the copy's contents then are unknown: the synced store's stand for them.
            var madeOn = base ?? synced.store.state
            for entry in entries {
                let action = SyncedTrackerAction(
                    entry.action, madeOn: madeOn, origin: TimeTracker.processOrigin, id: "\(before.copy).\(entry.id)"
                )
                _ = TrackerRules.reducer.reduce(&madeOn, entry.action)
                if let refusal = Self.refusal(of: action, by: synced) {
                    notQueued.withLock { $0 = refusal }
                } else {
                    synced.store.dispatch(action)
                }
            }
            let state = synced.store.state
            taken.withLock { $0 = state }
            return state
        }
        shown.withLock { $0 = taken.withLock { $0 } }
        try synced.flush()
        var after = before
        after.cursor = next
        if after != before { try after.write(in: outbox) }
        record.withLock { $0 = after }
        if let refusal = notQueued.withLock({ $0 }) { throw refusal }
    }

    /// Why `action` cannot be queued, if it cannot: the outbox is full, or the action is larger than a push carries
    /// (it would stop every action after it from being pushed).
    private static func refusal(
        of action: SyncedTrackerAction, by synced: SyncedStore<TrackerContents, SyncedTrackerAction>
    ) -> ChangeNotQueued? {
        let size = (try? JSONEncoder().encode(action).count) ?? 0
        if size > maximumActionSize {
            return ChangeNotQueued(description: """
                \(action) is too large to send (\(size / 1024) KiB, at most \(maximumActionSize / 1024) KiB): it is undone \
                here. Import smaller files, or import on the server.
                """)
        }
        if case .failed(.outboxFull(let limit)) = synced.status {
            return ChangeNotQueued(description: """
                \(action) is not sent: \(limit) changes already wait here, the most a copy keeps. It is undone here; \
                send the others first (timetrack sync).
                """)
        }
        return nil
    }

    /// The largest action queued: what the synced store pushes in one batch (1 MiB).
    static let maximumActionSize = 1 << 20

    /// Exchanges whenever an action is applied to the copy or the synced store changes, until the task it runs in is
    /// cancelled: for a command that stays (`watch`).
    func follow() async {
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        // The copy's last logged action, not its whole state: an exchange logs none, and the state changes at every
        // reading while an activity runs (its elapsed time), which would have each exchange call for another.
        let local = tracker.store.subscribe(\.lastChange, initial: false) { _ in continuation.yield() }
        let remote = synced.store.subscribe(initial: false) { _ in continuation.yield() }
        defer {
            local.cancel()
            remote.cancel()
        }
        await withTaskCancellationHandler {
            for await _ in changes { try? await exchange() }
        } onCancel: {
            continuation.finish()
        }
    }

    /// Writes the outbox, gives the server a few seconds to take what waits, then shows its state in the copy.
    ///
    /// - Returns: How the copy stands with the server.
    func settle(within timeout: Duration = .seconds(10)) async throws -> SyncReport {
        // The exchange writes the outbox before it returns.
        try await exchange()
        var status: SyncStatus
        switch openingFailure {
        case nil:
            synced.syncNow()
            status = await settled(within: timeout)
        // A server that did not answer a moment ago is not waited for: the changes wait in the outbox. Said from
        // that answer rather than the sync loops' status, which may not have tried yet.
        case .unreachable(_)?:
            status = .offline(since: Date(), retryingAt: Date())
        case let failure?:
            status = .failed(failure)
        }
        try await exchange()
        return SyncReport(
            server: server, status: status, pending: synced.pendingCount, ownFrom: firstOwnAction.withLock { $0 }
        )
    }

    /// The status once every action is pushed and answered, or the server refuses to go on, or `timeout` passed.
    /// Refusals come with the answer to a batch, and later batches (this command's actions) may still wait: they
    /// are gathered, acknowledged, and the wait goes on.
    private func settled(within timeout: Duration) async -> SyncStatus {
        let deadline = ContinuousClock.now + timeout
        var refusals: [SyncRefusal] = []
        while true {
            let status = await Self.firstStatus(of: synced, within: deadline - ContinuousClock.now) { status in
                switch status {
                case .synced, .refused, .failed: true
                case .pending, .offline: false
                }
            }
            guard case .refused(let refused) = status else {
                return refusals.isEmpty || status != .synced ? status : .refused(refusals)
            }
            refusals += refused
            synced.acknowledgeRefusals()
            if synced.pendingCount == 0 || ContinuousClock.now >= deadline { return .refused(refusals) }
        }
    }

    /// Why the server's state could not be taken within `timeout`; `nil` once it was.
    private static func pull(
        _ synced: SyncedStore<TrackerContents, SyncedTrackerAction>, within timeout: Duration
    ) async -> SyncError? {
        await withTaskGroup(of: SyncError?.self) { group in
            group.addTask {
                do throws(SyncError) {
                    try await synced.pull()
                    return nil
                } catch {
                    return error
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .unreachable("no answer within \(timeout)")
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
    }

    /// The first status `isSettled` accepts, or the status at the deadline.
    private static func firstStatus(
        of synced: SyncedStore<TrackerContents, SyncedTrackerAction>, within timeout: Duration,
        where isSettled: @escaping @Sendable (SyncStatus) -> Bool
    ) async -> SyncStatus {
        await withTaskGroup(of: SyncStatus?.self) { group in
            group.addTask {
                // Each value of the sequence is a cue to read the status, which is exact: the sequence's own values
                // follow it a moment later, and a `.synced` of before the command's push may still be its first.
                if isSettled(synced.status) { return synced.status }
                for await _ in synced.syncStatus {
                    let status = synced.status
                    if isSettled(status) { return status }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            return await group.next().flatMap { $0 } ?? synced.status
        }
    }
}

extension RemoteCopy {
    /// Where the copy of `server` goes without `--db`: beside the default database, one file per server.
    static func defaultPath(for server: URL) -> String {
        let folder = (TimeTracker.defaultDatabasePath() as NSString).deletingLastPathComponent
        let name = "\(server.host ?? "server")-\(server.port ?? (server.scheme == "https" ? 443 : 80))"
            .map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" }
        return (folder as NSString).appendingPathComponent("remote-\(String(name)).sqlite")
    }
}
