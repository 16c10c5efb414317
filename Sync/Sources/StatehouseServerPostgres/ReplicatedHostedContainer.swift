import Foundation
import NIOCore
import PostgresNIO
import Statehouse
import StatehousePostgres
import StatehouseServer

/// A container hosted on a PostgreSQL action log: each write is appended to the log with the version it replaces
/// (its `If-Match`), and every instance on the log applies it at its place there, so that the check and the write
/// see the same version on every instance, and each publishes every new version to its own followers.
final class ReplicatedHostedContainer: AnyHostedContainer {
    /// A write as an entry of the log.
    struct Write: Codable, Sendable {
        var value: Data?
        var condition: WriteCondition
    }

    /// The container as every instance on the log holds it.
    struct Replica: Codable, Sendable {
        var stored = StoredContainer.never
        /// The last write applied, whose request the instance that took it answers once it published it.
        var lastEntry: UUID?
    }

    let replica: ReplicatedStore<Replica, LogEntry<Write>>
    let following: FollowingState
    private let feeds: ContainerFeeds
    private let answers: Answers<ContainerWriteOutcome>
    /// Why a body is not a value of the container's type, or `nil` when it is.
    private let reject: @Sendable (Data) -> String?
    /// Keeps the feeds told of every write the log applies.
    private let publishing: SubscriptionToken

    init(
        client: PostgresClient, log: String, reject: @escaping @Sendable (Data) -> String?,
        onIssue: @escaping @Sendable (ReplicationIssue) -> Void
    ) throws(StorageError) {
        let answers = Answers<ContainerWriteOutcome>()
        let replica = try ReplicatedStore(client: client, log: log, initialState: Replica(), onIssue: onIssue) {
            (replica: inout Replica, entry: LogEntry<Write>) in
            guard case .taken(let id, let write) = entry else { return }
            let outcome: ContainerWriteOutcome
            if write.condition.holds(for: replica.stored) {
                replica.stored = StoredContainer(version: replica.stored.version + 1, value: write.value)
                outcome = .written(replica.stored)
            } else {
                outcome = .conditionFailed(replica.stored)
            }
            replica.lastEntry = id
            answers.deliver(outcome, to: id)
        }
        let feeds = ContainerFeeds(current: .never, isOpen: false)
        // Once per write applied, refused ones too: each is answered once what it did is published.
        self.publishing = replica.store.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, initial: false) {
            feeds.publish($0.stored)
            answers.published($0.lastEntry)
        }
        self.following = FollowingState(
            open: { feeds.open(); answers.open() }, close: { feeds.close(); answers.close() }
        )
        self.replica = replica
        self.feeds = feeds
        self.answers = answers
        self.reject = reject
    }

    var current: StoredContainer {
        feeds.current
    }

    var followerCount: Int {
        feeds.followerCount
    }

    var unavailability: String? {
        following.unavailability(of: "container")
    }

    func write(_ value: Data?, if condition: WriteCondition) async throws(ContainerWriteFailure) -> ContainerWriteOutcome {
        if let value, let reason = reject(value) { throw .badValue(reason) }
        guard let outcome = await answers.send(Write(value: value, condition: condition), through: replica) else {
            throw .unavailable("The write could not be appended to the container's log: write it again.")
        }
        return outcome
    }

    func follow(after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
        feeds.follow(after: lastSeen)
    }
}
