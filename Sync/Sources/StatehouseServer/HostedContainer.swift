import Foundation
import NIOCore
import Statehouse
import StatehouseSyncWire
import Synchronization

/// One container a ``SyncServer`` hosts: its value and version, the writes that replace them (each checked against
/// the version its client last saw), and the feeds that follow it.
final class HostedContainer: Sendable {
    private struct Shared {
        /// The newest version committed; a commit that finishes after a newer one is not published over it.
        var current: StoredContainer
        var followers: [UInt64: AsyncStream<ByteBuffer>.Continuation] = [:]
        var nextFollower: UInt64 = 0
    }

    /// What a write came to.
    enum WriteOutcome: Equatable {
        case written(StoredContainer)
        /// The condition did not hold for this version, which stays.
        case conditionFailed(StoredContainer)
    }

    let key: String
    private let storage: SyncServerStorage
    /// Why a body is not a value of the container's type, or `nil` when it is.
    private let reject: @Sendable (Data) -> String?
    /// The current version and the followers under one lock: a follower registers and reads the current value in the
    /// same critical section in which a write publishes, so it neither misses the newest value nor sees it twice.
    private let shared: Mutex<Shared>

    init(key: String, storage: SyncServerStorage, reject: @escaping @Sendable (Data) -> String?) throws {
        self.key = key
        self.storage = storage
        self.reject = reject
        self.shared = Mutex(Shared(current: try storage.load(container: key)))
    }

    var current: StoredContainer {
        shared.withLock { $0.current }
    }

    var followerCount: Int {
        shared.withLock { $0.followers.count }
    }

    /// Stores `value` (`nil` removes it) if `condition` holds for the stored version, and tells the followers.
    ///
    /// - Throws: ``ContainerWriteFailure``.
    func write(_ value: Data?, if condition: WriteCondition) async throws(ContainerWriteFailure) -> WriteOutcome {
        if let value, let reason = reject(value) { throw .badValue(reason) }
        let stored: StoredContainer
        let written: Bool
        do {
            (stored, written) = try await storage.write(container: key, value: value, if: condition)
        } catch {
            throw .unavailable("The container \(key) could not be written: \(error)")
        }
        guard written else { return .conditionFailed(stored) }
        shared.withLock { shared in
            guard stored.version > shared.current.version else { return }
            shared.current = stored
            let event = Self.event(stored)
            for follower in shared.followers.values { follower.yield(event) }
        }
        return .written(stored)
    }

    /// The container's feed: its value now unless `lastSeen` is its version, then its value after each write. A
    /// follower that reads slowly misses values in between, never the newest: a container is a value, not a log.
    func follow(after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
        let (events, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(1))
        let id = shared.withLock { shared in
            if lastSeen != shared.current.version { continuation.yield(Self.event(shared.current)) }
            defer { shared.nextFollower += 1 }
            shared.followers[shared.nextFollower] = continuation
            return shared.nextFollower
        }
        let end: @Sendable () -> Void = { [weak self] in
            continuation.finish()
            _ = self?.shared.withLock { $0.followers.removeValue(forKey: id) }
        }
        return (events, end)
    }

    /// A `value` or `removed` event. The value is JSON, whose line breaks can only be whitespace between tokens:
    /// they become spaces, so that the value fits the one `data:` line an event's parser reads back unchanged.
    private static func event(_ container: StoredContainer) -> ByteBuffer {
        var buffer = ByteBuffer(string: "id: \(container.version)\n")
        guard let value = container.value else {
            buffer.writeString("event: \(ContainerEvent.removed)\ndata:\n\n")
            return buffer
        }
        buffer.writeString("event: \(ContainerEvent.value)\ndata: ")
        buffer.writeBytes(value.map { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") ? UInt8(ascii: " ") : $0 })
        buffer.writeString("\n\n")
        return buffer
    }

    /// Rejects bodies that are not JSON of `Value`; a ``VersionedState`` is stored in its versioned envelope, whose
    /// value this server may be too old or too new to decode, so only the envelope is checked.
    static func rejecting<Value: Decodable & Sendable>(_ type: Value.Type) -> @Sendable (Data) -> String? {
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
}

/// Why a container write was not made.
enum ContainerWriteFailure: Error {
    case badValue(String)
    case unavailable(String)
}
