import Foundation
import Statehouse
import StatehousePostgres
import Synchronization

/// The replication of a store or a container hosted on a PostgreSQL action log (see
/// ``StatehouseServer/SyncServer/host(store:replicatedOn:log:initialState:reducer:authorize:onIssue:)``): run it
/// while the server serves what it hosts.
public final class SyncReplication: Sendable {
    private let runReplica: @Sendable () async throws(StorageError) -> Void
    private let caughtUp: @Sendable () async -> Void
    private let following: FollowingState

    init<State, Action>(_ replica: ReplicatedStore<State, Action>, following: FollowingState) {
        runReplica = { () async throws(StorageError) in try await replica.run() }
        caughtUp = { await replica.waitUntilCaughtUp() }
        self.following = following
    }

    /// Follows the log and appends the writes this instance takes, until the calling task is cancelled.
    ///
    /// What it hosts serves requests once it has applied the log up to where it was when this started, and until
    /// this ends.
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
        let caughtUp = self.caughtUp
        let following = self.following
        let marking = Task {
            await caughtUp()
            if !Task.isCancelled { following.caughtUp(run: run) }
        }
        defer { marking.cancel() }
        try await runReplica()
    }

    /// Whether what it hosts serves requests: ``run()`` runs and has caught up with the log.
    public var isServing: Bool {
        following.isFollowing
    }
}

/// The answers to the entries this instance appends, handed from the reducer that applies them (on every instance)
/// to the request that waits (on this one only): a reducer's effects would run in a task of their own, later.
final class Answers<Answer: Sendable>: Sendable {
    private let waiting = Mutex<[UUID: Answer?]>([:])

    /// Appends `action`, named `id`, and waits until this instance applied it; `nil` if it was not appended.
    func send<State, Action>(_ action: Action, id: UUID, through replica: ReplicatedStore<State, Action>) async -> Answer? {
        waiting.withLock { $0[id] = .some(nil) }
        do {
            try await replica.send(action)
        } catch {
            _ = waiting.withLock { $0.removeValue(forKey: id) }
            return nil
        }
        return waiting.withLock { $0.removeValue(forKey: id) } ?? nil
    }

    /// Keeps `answer` for the entry `id` if this instance waits for it.
    func deliver(_ answer: Answer, to id: UUID) {
        waiting.withLock { waiting in
            if waiting[id] != nil { waiting[id] = answer }
        }
    }
}

/// Whether the instance follows its log and has caught up with it: until then its state may be older than what a
/// client saw from another instance, and it answers 503.
final class FollowingState: Sendable {
    private enum Phase: Equatable {
        case idle
        case catchingUp(UInt64)
        case following
    }

    private let phase = Mutex<(phase: Phase, runs: UInt64)>((.idle, 0))

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
            if state.phase == .catchingUp(run) { state.phase = .following }
        }
    }

    func stop() {
        phase.withLock { $0.phase = .idle }
    }
}
