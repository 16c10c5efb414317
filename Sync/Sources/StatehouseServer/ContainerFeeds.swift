import Foundation
import NIOCore
import StatehouseSyncWire
import Synchronization

/// A hosted container's newest version and the feeds that follow it, under one lock: a follower registers and reads
/// the current value in the same critical section in which a write publishes, so it neither misses the newest value
/// nor sees it twice. Whoever commits writes (one server's storage, or a log several instances apply) publishes here.
package final class ContainerFeeds: Sendable {
    private struct Follower {
        var events: AsyncStream<ByteBuffer>.Continuation
        /// The version it has: it is sent none at or before it (it resumed on a server that was behind it).
        var after: Int64
    }

    private struct Shared {
        /// The newest version committed; a commit that finishes after a newer one is not published over it.
        var current: StoredContainer
        var followers: FollowerList<Follower>
    }

    private let shared: Mutex<Shared>

    /// - Parameter isOpen: Whether the feed may be followed at once; else from ``open()`` on.
    package init(current: StoredContainer, isOpen: Bool = true) {
        shared = Mutex(Shared(current: current, followers: FollowerList(isOpen: isOpen)))
    }

    package func open() {
        shared.withLock { $0.followers.open() }
    }

    /// Ends every feed (its client reconnects, and resumes where it left off), and each new one until ``open()``.
    package func close() {
        for follower in shared.withLock({ $0.followers.close() }) { follower.events.finish() }
    }

    package var current: StoredContainer {
        shared.withLock { $0.current }
    }

    package var followerCount: Int {
        shared.withLock { $0.followers.count }
    }

    /// Makes `stored` the current version and sends it to the followers, unless a newer one is current already.
    package func publish(_ stored: StoredContainer) {
        shared.withLock { shared in
            guard stored.version > shared.current.version else { return }
            shared.current = stored
            let event = Self.event(stored)
            for follower in shared.followers.all.values where stored.version > follower.after {
                follower.events.yield(event)
            }
        }
    }

    /// The container's feed: its value now unless `lastSeen` is its version or a later one, then its value after each
    /// write past both. A follower that reads slowly misses values in between, never the newest: a container is a
    /// value, not a log.
    package func follow(after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
        let (events, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(1))
        let id = shared.withLock { shared -> UInt64? in
            guard shared.followers.isOpen else { return nil }
            if lastSeen.map({ $0 < shared.current.version }) ?? true { continuation.yield(Self.event(shared.current)) }
            return shared.followers.add(Follower(events: continuation, after: max(lastSeen ?? 0, shared.current.version)))
        }
        return (events, feedEnd(for: id, of: continuation) { [weak self] id in self?.shared.withLock { $0.followers.remove(id) } })
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
}
