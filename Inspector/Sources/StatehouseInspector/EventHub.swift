import Foundation
import NIOConcurrencyHelpers

/// Numbers the inspector's events and hands each to every page following them.
///
/// A number and a log's append happen under one lock (``publish(_:)``): pages receive events in the order of their
/// ids, and a page resuming after id N (`Last-Event-ID`) finds every later event still in the logs, none twice. Each
/// page has a bounded buffer: a page that stops reading is cut off when it fills, instead of holding memory or
/// slowing anyone, and resumes by its last id when it reconnects.
final class EventHub: Sendable {
    private struct Followers: Sendable {
        var lastID: UInt64 = 0
        var nextFollower = 0
        var continuations: [Int: AsyncStream<FeedItem>.Continuation] = [:]
    }

    /// How many events a page may have waiting before it is cut off.
    let bufferPerPage: Int
    private let followers = NIOLockedValueBox(Followers())

    init(bufferPerPage: Int) {
        self.bufferPerPage = bufferPerPage
    }

    /// Numbers the event `make` returns, given its id, and sends it to every page; under the hub's lock, so that
    /// `make` appends it to its log in id order.
    func publish(_ make: (UInt64) -> InspectorEvent?) {
        followers.withLockedValue { followers in
            guard let event = make(followers.lastID + 1) else { return }
            followers.lastID += 1
            for (key, continuation) in followers.continuations {
                if case .dropped = continuation.yield(.event(followers.lastID, event)) {
                    continuation.finish()
                    followers.continuations[key] = nil
                }
            }
        }
    }

    /// Reads, under the hub's lock, what a page loads before it follows: `read` gets the last id published, which
    /// the page then follows from.
    func snapshot<Result>(_ read: (UInt64) -> Result) -> Result {
        followers.withLockedValue { read($0.lastID) }
    }

    /// The events after `id`, as `backlog` reads them from the logs, then every event published from now on; what
    /// puts a heartbeat in line with them; and what ends the following.
    func follow(
        after id: UInt64,
        backlog: (UInt64) -> [(UInt64, InspectorEvent)]
    ) -> (items: AsyncStream<FeedItem>, heartbeat: @Sendable () -> Void, end: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: FeedItem.self, bufferingPolicy: .bufferingOldest(bufferPerPage)
        )
        let key = followers.withLockedValue { followers -> Int? in
            for (id, event) in backlog(id) {
                // A backlog larger than the buffer: the page gets what fits, and resumes from there.
                guard case .enqueued = continuation.yield(.event(id, event)) else {
                    continuation.finish()
                    return nil
                }
            }
            followers.nextFollower += 1
            followers.continuations[followers.nextFollower] = continuation
            return followers.nextFollower
        }
        let end: @Sendable () -> Void = { [weak self] in
            continuation.finish()
            guard let key else { return }
            _ = self?.followers.withLockedValue { $0.continuations.removeValue(forKey: key) }
        }
        // A heartbeat that finds the buffer full finds a page that stopped reading: it is cut off.
        let heartbeat: @Sendable () -> Void = {
            if case .dropped = continuation.yield(.heartbeat) { end() }
        }
        return (stream, heartbeat, end)
    }

    /// How many pages follow now.
    var followerCount: Int {
        followers.withLockedValue { $0.continuations.count }
    }
}

/// What a page's feed carries: an event with its id, or a heartbeat.
enum FeedItem: Sendable {
    case event(UInt64, InspectorEvent)
    case heartbeat
}
