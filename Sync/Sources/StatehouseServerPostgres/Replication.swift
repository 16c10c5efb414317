import Foundation
import Statehouse
import StatehousePostgres
import Synchronization

/// The replication of a store or a container hosted on a PostgreSQL action log (see
/// ``StatehouseServer/SyncServer/host(store:replicatedOn:log:initialState:reducer:authorize:onIssue:)``): run it
/// while the server serves what it hosts.
public final class SyncReplication: Sendable {
    private let runReplica: @Sendable () async throws(StorageError) -> Void
    private let barrier: @Sendable () async throws -> Void
    private let following: FollowingState

    init<Replica, Payload>(_ replica: ReplicatedStore<Replica, LogEntry<Payload>>, following: FollowingState) {
        runReplica = { () async throws(StorageError) in try await replica.run() }
        barrier = { try await replica.send(.barrier) }
        self.following = following
    }

    /// Follows the log and appends the writes this instance takes, until the calling task is cancelled.
    ///
    /// What it hosts serves requests once this has applied the log up to where it was when this started, and until
    /// this ends; then the feeds open on this instance end (their clients reconnect, to another instance behind a load
    /// balancer) and the requests that wait are answered 503.
    ///
    /// - Throws: What `ReplicatedStore.run()` throws: `StorageError.Kind.undecodable` for an entry that does not
    ///   decode (written by another version of the program); `.invalidConfiguration` if it runs already.
    public func run() async throws(StorageError) {
        guard let run = following.start() else {
            throw StorageError(
                .invalidConfiguration, key: nil, operation: .open,
                message: "The replication runs already: run it from one task at a time."
            )
        }
        defer { following.stop() }
        let (barrier, following) = (self.barrier, self.following)
        // Applied here, an entry appended now says that this instance applied every entry the log held before it.
        // (`ReplicatedStore.waitUntilCaughtUp()` knows only the store's first run.)
        let catchingUp = Task {
            guard (try? await barrier()) != nil, !Task.isCancelled else { return }
            following.caughtUp(run: run)
        }
        defer { catchingUp.cancel() }
        try await runReplica()
    }

    /// Whether what it hosts serves requests: ``run()`` runs and has caught up with the log.
    public var isServing: Bool {
        following.isFollowing
    }
}

/// An entry of a store's or a container's log.
enum LogEntry<Payload: Codable & Sendable>: Codable, Sendable {
    /// A push or a write an instance took, named for the request on that instance that waits for its answer.
    case taken(UUID, Payload)
    /// Appended when a replication starts: applied, it tells the instance that it caught up with the log.
    case barrier
}

/// The answers to the entries this instance appends, from the reducer that applies them (on every instance) to the
/// request that waits (on this one only), once the change is published: a read right after the answer shows it.
final class Answers<Answer: Sendable>: Sendable {
    private struct Waiter {
        var continuation: CheckedContinuation<Answer?, Never>
        /// Set when the entry is applied; the request gets it once the change is published.
        var answer: Answer?
    }

    private struct Waiting {
        /// Whether the replication follows the log: if not, an entry appended now would not be applied.
        var accepting = false
        var waiters: [UUID: Waiter] = [:]
    }

    private let waiting = Mutex(Waiting())

    /// Appends `payload` and waits for its answer: `nil` if the log did not take it, or the replication stopped
    /// first (push it again).
    func send<Replica, Payload>(_ payload: Payload, through replica: ReplicatedStore<Replica, LogEntry<Payload>>) async -> Answer? {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let accepted = waiting.withLock { waiting in
                guard waiting.accepting else { return false }
                waiting.waiters[id] = Waiter(continuation: continuation)
                return true
            }
            guard accepted else { return continuation.resume(returning: nil) }
            // Apart from the wait: `ReplicatedStore.send` waits for as long as the replication does not run, and
            // the request is answered when it stops (see `close()`).
            Task {
                do {
                    try await replica.send(.taken(id, payload))
                } catch {
                    self.finish(id, with: nil)
                }
            }
        }
    }

    /// Keeps `answer` for the entry `id`, if this instance waits for it.
    func deliver(_ answer: Answer, to id: UUID) {
        waiting.withLock { waiting in
            waiting.waiters[id]?.answer = answer
        }
    }

    /// The change of the entry `id` is published: its request gets its answer.
    func published(_ id: UUID?) {
        guard let id else { return }
        let answer = waiting.withLock { $0.waiters[id]?.answer }
        finish(id, with: answer)
    }

    func open() {
        waiting.withLock { $0.accepting = true }
    }

    /// Answers every request that waits with `nil`, and each new one until ``open()``.
    func close() {
        let waiters = waiting.withLock { waiting in
            waiting.accepting = false
            defer { waiting.waiters = [:] }
            return waiting.waiters.values
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    private func finish(_ id: UUID, with answer: Answer?) {
        waiting.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: answer)
    }
}

/// Whether the instance follows its log and has caught up with it: until then its state may be older than what a
/// client saw from another instance, and it answers 503. What it hosts opens its feeds and answers when it starts
/// serving, and closes them when it stops, under the same lock: a request that found it serving either gets in
/// before the close, and is ended by it, or is refused.
final class FollowingState: Sendable {
    private enum Phase: Equatable {
        case idle
        case catchingUp(UInt64)
        case following
    }

    private let phase = Mutex<(phase: Phase, runs: UInt64)>((.idle, 0))
    private let open: @Sendable () -> Void
    private let close: @Sendable () -> Void

    init(open: @escaping @Sendable () -> Void, close: @escaping @Sendable () -> Void) {
        self.open = open
        self.close = close
    }

    var isFollowing: Bool {
        phase.withLock { $0.phase == .following }
    }

    /// Why what the replication hosts answers 503, if it does.
    func unavailability(of what: String) -> String? {
        isFollowing ? nil : "The \(what) is catching up with its log, or this instance does not follow it: try again later."
    }

    /// A run starts: returns its number, or `nil` while another runs.
    func start() -> UInt64? {
        phase.withLock { state in
            guard state.phase == .idle else { return nil }
            state.runs += 1
            state.phase = .catchingUp(state.runs)
            return state.runs
        }
    }

    /// The run numbered `run` caught up; ignored once it has ended.
    func caughtUp(run: UInt64) {
        phase.withLock { state in
            guard state.phase == .catchingUp(run) else { return }
            state.phase = .following
            open()
        }
    }

    func stop() {
        phase.withLock { state in
            state.phase = .idle
            close()
        }
    }
}
