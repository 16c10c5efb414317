import Foundation
import Statehouse
import StatehouseSyncWire
import Synchronization

/// The two loops that keep a journal in step with the server: one pushes the outbox, one follows the feed. Both run
/// until ``stop()``, trying again with back-off whatever fails.
@usableFromInline
final class SyncEngine<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
    @usableFromInline typealias Journal = Store<SyncJournal<State, Action>, SyncStep<State, Action>>

    private let journal: Journal
    private let connection: SyncConnection
    private let maximumBatch: Int
    private let maximumBatchBytes: Int
    let status: StateContainer<SyncStatus>
    private let publishing: StatusPublishing
    private let signals: SyncSignals
    /// Raised when the outbox grows (by the journal's reducer) or `syncNow` is asked; the push loop waits on it when
    /// it has nothing to push.
    private var pushWake: WakeSignal { signals.wake }
    /// Raised by `syncNow` only: between tries, the loops wait for their back-off or for it, not for the outbox to
    /// grow (offline, each action would be a try).
    private let pushRetry = WakeSignal()
    private let feedRetry = WakeSignal()
    private let tasks = Mutex<[Task<Void, Never>]>([])
    /// How long an idle push loop waits, once woken by an action, for the ones dispatched after it.
    private static var gathering: Duration { .milliseconds(2) }

    /// - Parameters:
    ///   - maximumBatch: The most actions one push carries.
    ///   - maximumBatchBytes: The most bytes of actions one push carries: a quarter of the server's default body
    ///     limit.
    ///   - signals: What the journal's reducer keeps up to date: the health's count of waiting actions, and the wake.
    @usableFromInline
    init(
        journal: Journal, connection: SyncConnection, signals: SyncSignals, maximumBatch: Int = 500,
        maximumBatchBytes: Int = 1 << 20
    ) {
        self.journal = journal
        self.signals = signals
        self.connection = connection
        self.maximumBatch = maximumBatch
        self.maximumBatchBytes = maximumBatchBytes
        let status = signals.health.withLock { $0.status }
        // A key of its own: container keys are unique in a process, and two synced stores may sync one store.
        self.status = StateContainer(
            status,
            key: "statehouse.sync.\(connection.store).status.\(UUID().uuidString)"
        )
        self.publishing = StatusPublishing(to: self.status)
    }

    @usableFromInline
    func start() {
        let pushing = Task { await self.pushLoop() }
        let following = Task { await self.feedLoop() }
        let publishing = Task { await self.publishLoop() }
        tasks.withLock { $0 = [pushing, following, publishing] }
    }

    @usableFromInline
    func stop() {
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }

    func acknowledgeRefusals() {
        update { $0.refused = [] }
    }

    func syncNow() {
        pushWake.raise()
        pushRetry.raise()
        feedRetry.raise()
    }

    /// The status as the health says it now: what ``SyncedStore/status`` reads.
    var currentStatus: SyncStatus {
        signals.health.withLock { $0.status }
    }

    func update(_ change: (inout SyncHealth) -> Void) {
        signals.health.withLock { change(&$0) }
        publishing.publish { signals.health.withLock { $0.status } }
    }

    private func publish() {
        update { _ in }
    }

    /// Publishes the status when a step changed its kind (see `SyncSignals.statusChanged`).
    private func publishLoop() async {
        while !Task.isCancelled {
            await signals.statusChanged.wait()
            publish()
        }
    }

    /// Pushes what the server has not answered yet, a batch at a time, and waits for more when nothing is left.
    private func pushLoop() async {
        var backoff = Backoff()
        // Halved on each 413 (the server's body limit is below ours): the server's limits seldom change, so it stays.
        var batchLimit = maximumBatch
        // The last sequence number the outbox on disk holds: a batch within it is pushed without writing the outbox
        // first (writing it encodes all of it: for a large outbox, once per batch would cost more than the pushes).
        var savedThrough: Int64 = 0
        while !Task.isCancelled {
            let state = journal.state
            // Off the app's path, once a wake (see `SyncSignals`).
            publish()
            let next: OutboxBatch<Action>?
            do throws(SyncError) {
                next = try OutboxBatch.next(from: state.unpushed(upTo: batchLimit), maximumBytes: maximumBatchBytes)
                if let last = next?.actions.last?.seq, last > savedThrough {
                    // Read before the flush, which writes every action committed before it (`Store.flush()`).
                    let dispatched = journal.state.nextSeq - 1
                    try saveOutbox()
                    savedThrough = dispatched
                }
            } catch {
                await pushFailed(error, backoff: &backoff)
                continue
            }
            guard let batch = next else {
                await pushWake.wait()
                // The actions an app dispatches in a burst go in one push: each push's answer and change rebase the
                // pending actions under the journal's lock, which the app's dispatches wait for.
                try? await Task.sleep(for: Self.gathering)
                continue
            }
            do throws(SyncError) {
                let answer = try await connection.push(client: state.client, batch)
                took(answer, for: batch)
                backoff.reset()
                if answer.cursor > journal.state.cursor { await pull() }
            } catch .refusedByServer(status: 413, _) where batch.actions.count > 1 {
                batchLimit = batch.actions.count / 2
            } catch {
                await pushFailed(error, backoff: &backoff)
            }
        }
    }

    private func pushFailed(_ error: SyncError, backoff: inout Backoff) async {
        let delay = backoff.next()
        update { $0.failed(error, retryingIn: delay) }
        await pushRetry.wait(upTo: delay)
    }

    /// Writes the outbox before its actions leave: one pushed and then lost in a crash would leave its sequence
    /// number to the next action, which the server would skip as a replay.
    private func saveOutbox() throws(SyncError) {
        do {
            try journal.flush()
        } catch {
            throw .outboxNotSaved("\(error)")
        }
    }

    private func took(_ answer: PushAnswer, for batch: OutboxBatch<Action>) {
        let reasons = Dictionary(answer.refused.map { ($0.seq, $0.reason) }, uniquingKeysWith: { first, _ in first })
        // Described before the health's lock: a description is the app's code, which may read the store.
        let refusals = batch.actions.compactMap { pushed in
            reasons[pushed.seq].map { SyncRefusal(seq: pushed.seq, action: String(describing: pushed.action), reason: $0) }
        }
        // Refusals first, then the journal drops the refused actions: the other way round, the status would say
        // `.synced` in between, with nothing pending and no refusal yet.
        update { health in
            health.reached()
            health.refuse(refusals)
        }
        journal.dispatch(.pushed(answer))
    }

    /// Takes the server's state now, unless the feed brought a newer one first.
    private func pull() async {
        // The feed brings the same state; a pull is only a shortcut.
        try? await pullNow()
    }

    /// Takes the server's state now, unless the feed brought a newer one first; throws when the server cannot say.
    func pullNow() async throws(SyncError) {
        let snapshot = try await connection.pull(client: journal.state.client, as: State.self)
        journal.dispatch(.snapshot(snapshot))
        update { $0.reached() }
    }

    /// Follows the feed from the journal's cursor; reconnects after every end.
    private func feedLoop() async {
        var backoff = Backoff()
        while !Task.isCancelled {
            let state = journal.state
            var delivered = false
            do {
                for try await event in connection.feed(client: state.client, after: state.cursor > 0 ? state.cursor : nil) {
                    guard event != .opened else {
                        backoff.reset()
                        update { $0.reached() }
                        continue
                    }
                    take(event)
                    delivered = true
                }
                // The server ended the feed (it cut this follower off, or it stops): back at once, unless it ends
                // every feed before sending anything.
                if !delivered { await feedRetry.wait(upTo: backoff.next()) }
            } catch {
                let failure = error as? SyncError ?? .unreachable("\(error)")
                let delay = backoff.next()
                update { $0.failed(failure, retryingIn: delay) }
                await feedRetry.wait(upTo: delay)
            }
        }
    }

    private func take(_ event: ServerSentEvent) {
        let decoder = JSONDecoder()
        let data = Data(event.data.utf8)
        switch event.name {
        case FeedEvent.snapshot:
            guard let snapshot = try? decoder.decode(StoreSnapshot<State>.self, from: data) else { return }
            journal.dispatch(.snapshot(snapshot))
        case FeedEvent.change:
            guard let change = try? decoder.decode(StoreChange<State>.self, from: data) else { return }
            journal.dispatch(.change(change))
        default:
            return
        }
        publish()
    }
}
