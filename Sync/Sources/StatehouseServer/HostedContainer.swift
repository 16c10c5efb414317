import Foundation
import NIOCore
import Statehouse

/// A hosted container, type-erased so that the server's routes hold containers kept in any way.
package protocol AnyHostedContainer: Sendable {
    /// The newest version this server knows.
    var current: StoredContainer { get }
    var followerCount: Int { get }
    /// Why the container answers no request now (503), if it does not.
    var unavailability: String? { get }
    /// Stores `value` (`nil` removes it) if `condition` holds for the stored version, and tells the followers.
    ///
    /// - Throws: ``ContainerWriteFailure``.
    func write(_ value: Data?, if condition: WriteCondition) async throws(ContainerWriteFailure) -> ContainerWriteOutcome
    /// The container's feed: its value now unless `lastSeen` is its version, then its value after each write.
    func follow(after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void)
}

/// What a write came to.
package enum ContainerWriteOutcome: Equatable, Sendable {
    case written(StoredContainer)
    /// The condition did not hold for this version, which stays.
    case conditionFailed(StoredContainer)
}

/// Why a container write was not made.
package enum ContainerWriteFailure: Error {
    case badValue(String)
    case unavailable(String)
}

/// One container a ``SyncServer`` hosts in its storage: its value and version, the writes that replace them (each
/// checked against the version its client last saw), and the feeds that follow it.
final class HostedContainer: AnyHostedContainer {
    let key: String
    private let storage: SyncServerStorage
    /// Why a body is not a value of the container's type, or `nil` when it is.
    private let reject: @Sendable (Data) -> String?
    private let feeds: ContainerFeeds

    init(key: String, storage: SyncServerStorage, reject: @escaping @Sendable (Data) -> String?) throws {
        self.key = key
        self.storage = storage
        self.reject = reject
        self.feeds = ContainerFeeds(current: try storage.load(container: key))
    }

    var current: StoredContainer {
        feeds.current
    }

    var followerCount: Int {
        feeds.followerCount
    }

    var unavailability: String? { nil }

    func write(_ value: Data?, if condition: WriteCondition) async throws(ContainerWriteFailure) -> ContainerWriteOutcome {
        if let value, let reason = reject(value) { throw .badValue(reason) }
        let stored: StoredContainer
        let written: Bool
        do {
            (stored, written) = try await storage.write(container: key, value: value, if: condition)
        } catch {
            throw .unavailable("The container \(key) could not be written: \(error)")
        }
        guard written else { return .conditionFailed(stored) }
        feeds.publish(stored)
        return .written(stored)
    }

    func follow(after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
        feeds.follow(after: lastSeen)
    }
}

/// Rejects bodies that are not JSON of `Value`; a ``VersionedState`` is stored in its versioned envelope, whose value
/// this server may be too old or too new to decode, so only the envelope is checked.
package func rejectingAllBut<Value: Decodable & Sendable>(_ type: Value.Type) -> @Sendable (Data) -> String? {
    { data in
        if Value.self is any VersionedState.Type {
            guard let envelope = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                envelope["version"] is NSNumber, envelope["value"] != nil
            else { return "The body is not a versioned value: {\"version\": …, \"value\": …}." }
            return nil
        }
        do {
            _ = try JSONDecoder().decode(Value.self, from: data)
            return nil
        } catch {
            return "The body is not a value of \(Value.self): \(error)"
        }
    }
}
