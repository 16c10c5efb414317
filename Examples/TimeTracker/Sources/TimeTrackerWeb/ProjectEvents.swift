import Foundation
import NIOCore
import Statehouse
import Synchronization
import TimeTrackerCore

/// The `projects` event every open page receives, encoded once per change and shared by every event stream.
///
/// Encoding the list for each page made a change cost as many encodings as there were pages (with 1,000 projects,
/// 105 ms for an action's round trip with 10 pages open and 522 ms with 100). The bytes go out as one `ByteBuffer`,
/// whose storage every stream shares. They carry no clock: a page that connects later gets the latest event, and
/// each stream sends the server's time itself (see ``EventStream``).
final class ProjectEvents: Sendable {
    private struct Streams {
        var latest: ByteBuffer
        var continuations: [UInt64: AsyncStream<ByteBuffer>.Continuation] = [:]
        var nextID: UInt64 = 0
    }

    private struct Payload: Encodable {
        var projects: [ProjectPayload]
        /// Why the tracker stopped working (``TrackerState/problem``), for the page to show.
        var problem: String?
        /// What undo and redo would do (``TrackerState/undoName``), for the page's buttons.
        var undo: String?
        var redo: String?
        /// The newest change, and whether this server made it: the page names who did when another process did.
        var lastChange: Change?
    }

    private struct Change: Encodable {
        var summary: String
        var origin: String
        /// Seconds since 1970.
        var at: Double
        var here: Bool
    }

    private let streams: Mutex<Streams>
    private let subscription = Mutex<SubscriptionToken?>(nil)

    /// The events of `tracker`'s state; changes whose origin is not `tracker`'s are another process's.
    init(tracker: TimeTracker) {
        let origin = tracker.origin
        streams = Mutex(Streams(latest: Self.event(tracker.store.state, origin: origin)))
        let token = tracker.store.subscribe(\.self, initial: false) { [weak self] state in
            self?.publish(Self.event(state, origin: origin))
        }
        subscription.withLock { $0 = token }
    }

    deinit {
        subscription.withLock { $0?.cancel() }
    }

    /// The latest event, then each new one. A slow page gets the newest only: each event carries the whole list.
    /// - Returns: The events, and what ends them (call it when the stream's connection ends).
    func subscribe() -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
        let (events, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(2))
        // Registered and given the latest event under the lock that publishing takes: none is missed or reordered.
        let id = streams.withLock { streams in
            defer { streams.nextID += 1 }
            streams.continuations[streams.nextID] = continuation
            continuation.yield(streams.latest)
            return streams.nextID
        }
        let end: @Sendable () -> Void = { [weak self] in
            continuation.finish()
            _ = self?.streams.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return (events, end)
    }

    private func publish(_ event: ByteBuffer) {
        streams.withLock { streams in
            streams.latest = event
            for continuation in streams.continuations.values { continuation.yield(event) }
        }
    }

    private static func event(_ state: TrackerState, origin: String) -> ByteBuffer {
        let payload = Payload(
            projects: state.projects.map { ProjectPayload($0) }, problem: state.problem, undo: state.undoName,
            redo: state.redoName,
            lastChange: state.lastChange.map { change in
                Change(
                    summary: change.summary, origin: change.origin, at: change.at.timeIntervalSince1970,
                    here: change.origin == origin
                )
            }
        )
        let json = (try? JSONEncoder().encode(payload)) ?? Data("{}".utf8)
        var buffer = ByteBuffer(string: "event: projects\ndata: ")
        buffer.writeBytes(json)
        buffer.writeString("\n\n")
        return buffer
    }
}
