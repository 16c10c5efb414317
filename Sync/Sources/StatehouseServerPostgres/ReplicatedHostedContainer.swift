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
        /// Names the write on the instance that waits for its outcome.
        var id: UUID
        var value: Data?
        var condition: WriteCondition
    }

    let replica: ReplicatedStore<StoredContainer, Write>
    let following = FollowingState()
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
        let replica = try ReplicatedStore(client: client, log: log, initialState: StoredContainer.never, onIssue: onIssue) {
            (stored: inout StoredContainer, write: Write) in
            let outcome: ContainerWriteOutcome
            if write.condition.holds(for: stored) {
                stored = StoredContainer(version: stored.version + 1, value: write.value)
                outcome = .written(stored)
            } else {
                outcome = .conditionFailed(stored)
            }
            answers.deliver(outcome, to: write.id)
        }
        let feeds = ContainerFeeds(current: .never)
        self.publishing = replica.store.subscribe(\.self, initial: false) { feeds.publish($0) }
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
        let write = Write(id: UUID(), value: value, condition: condition)
        guard let outcome = await answers.send(write, id: write.id, through: replica) else {
            throw .unavailable("The write could not be appended to the container's log: write it again.")
        }
        return outcome
    }

    func follow(after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
        feeds.follow(after: lastSeen)
    }
}
