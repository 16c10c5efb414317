import Foundation
import NIOCore
import StatehouseSyncWire
import Synchronization

/// A hosted store's published state and the feeds that follow it, under one lock: a follower registers and reads its
/// snapshot in the same critical section in which a change is published, so it neither misses a change nor sees one
/// twice. Whoever applies pushes (``HostedStore`` on one server, a replicated store on several) publishes here.
package final class StoreFeeds<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
    struct Follower {
        var caller: SyncCaller
        var events: AsyncStream<ByteBuffer>.Continuation
        /// The cursor it has: it is sent no change at or before it (it resumed on a server that was behind it).
        var after: Int64
    }

    struct Shared {
        var live: LiveStore<State, Action>
        var followers: FollowerList<Follower>

        /// Sends a change to every follower: to the pushing client's own feeds (its name, with the token it pushes
        /// with) with how far the push handled its actions, to the others without. A follower whose buffer is full
        /// is cut off rather than skipped: a skipped change could carry its client's last handled sequence number,
        /// and the client would apply those actions twice. It reconnects with the last id it saw and starts again
        /// from a snapshot.
        mutating func publish(_ change: StoreChangeEvent) {
            for (id, follower) in followers.all where change.cursor > follower.after {
                let event = change.event(for: follower.caller)
                if case .dropped = follower.events.yield(event) {
                    follower.events.finish()
                    followers.remove(id)
                }
            }
        }
    }

    private let shared: Mutex<Shared>
    private let followerBuffer: Int

    /// - Parameter isOpen: Whether the feeds may be followed at once; else from ``open()`` on.
    package init(live: LiveStore<State, Action>, followerBuffer: Int, isOpen: Bool = true) {
        self.shared = Mutex(Shared(live: live, followers: FollowerList(isOpen: isOpen)))
        self.followerBuffer = followerBuffer
    }

    package func open() {
        shared.withLock { $0.followers.open() }
    }

    /// Ends every feed (its client reconnects, and resumes where it left off), and each new one until ``open()``.
    package func close() {
        for follower in shared.withLock({ $0.followers.close() }) { follower.events.finish() }
    }

    /// The state the followers have, with its cursor and the clients' sequence numbers.
    package var live: LiveStore<State, Action> {
        shared.withLock { $0.live }
    }

    package var followerCount: Int {
        shared.withLock { $0.followers.count }
    }

    /// Makes `live` the published state and sends `changes` to the followers, in one critical section.
    package func publish(_ live: LiveStore<State, Action>, changes: [StoreChangeEvent]) {
        shared.withLock { shared in
            shared.live = live
            for change in changes { shared.publish(change) }
        }
    }

    package func snapshot(for caller: SyncCaller) throws(PushFailure) -> Data {
        let live = self.live
        do {
            return try StoreEvents.encoder.encode(
                StoreSnapshot(cursor: live.cursor, state: live.state, handledThrough: live.handledThrough(of: caller))
            )
        } catch {
            throw .unavailable("The store's state cannot be encoded: \(error)")
        }
    }

    /// The feed of changes for `caller`: a snapshot first unless `lastSeen` is the current cursor or after it, then
    /// each change after both. A feed resumed on a server behind the client (another instance on the same log) is
    /// sent nothing it has seen.
    package func follow(
        _ caller: SyncCaller, after lastSeen: Int64?
    ) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
        let (events, continuation) = AsyncStream.makeStream(
            of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(followerBuffer)
        )
        let id = shared.withLock { shared -> UInt64? in
            guard shared.followers.isOpen else { return nil }
            if lastSeen.map({ $0 < shared.live.cursor }) ?? true {
                let live = shared.live
                continuation.yield(
                    StoreEvents.event(
                        FeedEvent.snapshot, id: live.cursor,
                        json: (try? StoreEvents.encoder.encode(
                            StoreSnapshot(cursor: live.cursor, state: live.state, handledThrough: live.handledThrough(of: caller))
                        )) ?? Data("{}".utf8)
                    )
                )
            }
            return shared.followers.add(
                Follower(caller: caller, events: continuation, after: max(lastSeen ?? 0, shared.live.cursor))
            )
        }
        return (events, feedEnd(for: id, of: continuation) { [weak self] id in self?.shared.withLock { $0.followers.remove(id) } })
    }
}

/// A change as the feeds send it: with the sequence numbers of the clients it handled actions of to those clients'
/// own feeds, without to every other.
package struct StoreChangeEvent: Sendable {
    var cursor: Int64
    /// The clients whose feeds get their own event, each with the token it pushes with.
    var own: [SyncCaller: ByteBuffer]
    var others: ByteBuffer

    /// The change at `cursor` to `state` (as the commit encoded it: once per change, however many followers), for
    /// feeds; `handledThrough` names each client it handled actions of, with how far.
    package init(cursor: Int64, state: Data, handledThrough: [SyncCaller: Int64]) {
        self.cursor = cursor
        own = handledThrough.mapValues { StoreEvents.change(cursor: cursor, state: state, handledThrough: $0) }
        others = StoreEvents.change(cursor: cursor, state: state, handledThrough: nil)
    }

    func event(for caller: SyncCaller) -> ByteBuffer {
        own[caller] ?? others
    }
}

/// The bytes of a store's feed events and snapshots.
package enum StoreEvents {
    /// Sorted keys: one state encodes to the same bytes on every server instance.
    package static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    /// A ``StoreChange``'s event, around the state as the commit encoded it.
    static func change(cursor: Int64, state: Data, handledThrough: Int64?) -> ByteBuffer {
        var json = Data("{\"cursor\":\(cursor),".utf8)
        if let handledThrough { json.append(Data("\"handledThrough\":\(handledThrough),".utf8)) }
        json.append(Data("\"state\":".utf8))
        json.append(state)
        json.append(Data("}".utf8))
        return event(FeedEvent.change, id: cursor, json: json)
    }

    /// One server-sent event. JSON without pretty printing is one line, as a `data:` field must be.
    static func event(_ name: String, id: Int64, json: Data) -> ByteBuffer {
        var buffer = ByteBuffer(string: "id: \(id)\nevent: \(name)\ndata: ")
        buffer.writeBytes(json)
        buffer.writeString("\n\n")
        return buffer
    }
}
