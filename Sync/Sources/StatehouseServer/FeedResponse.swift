import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization

/// A store's feed as server-sent events: the events ``AnyHostedStore/follow(_:after:)`` gives, with a comment
/// line whenever the feed has been quiet for a heartbeat, so that proxies keep it open and a client that vanished is
/// noticed (the server learns it only when a write fails).
///
/// A client that stops reading (a phone gone from the network without closing the connection, a stalled proxy)
/// leaves a write waiting for the socket. Such a write, the response's end included, is given two heartbeats, and a
/// server shutting down one second, before the feed's connection is dropped: the client resumes from the last id it
/// saw.
struct FeedResponse: Sendable {
    let heartbeat: Duration
    let follow: @Sendable () -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void)

    init(heartbeat: Duration, follow: @escaping @Sendable () -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void)) {
        self.heartbeat = heartbeat
        self.follow = follow
    }

    func response() -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in try await stream(to: writer) }
        )
    }

    /// Follows only once the body is written, so that a response never sent holds no follower.
    private func stream(to writer: any ResponseBodyWriter) async throws {
        let (events, end) = follow()
        defer { end() }
        // An event or a heartbeat, whichever comes first; the stream's end (a follower cut off for reading too
        // slowly, or the store going away) ends the response, and the client resumes from the last id it saw.
        // Bounded as the follower's own buffer is, and for the same reason: an event that cannot wait is not
        // skipped, the feed ends.
        let (merged, continuation) = AsyncStream.makeStream(of: ByteBuffer?.self, bufferingPolicy: .bufferingOldest(16))
        let forwarding = Task {
            for await event in events {
                if case .dropped = continuation.yield(event) { break }
            }
            continuation.finish()
        }
        let beating = Task { [heartbeat] in
            while !Task.isCancelled {
                try? await Task.sleep(for: heartbeat)
                continuation.yield(nil)
            }
        }
        defer {
            forwarding.cancel()
            beating.cancel()
        }
        // The writes run in a task of their own, which cancelling ends even while a write waits for the socket.
        let box = WriterBox(writer)
        let pendingWrite = PendingWrite()
        let writing = Task {
            for await event in merged {
                pendingWrite.starts()
                try await box.writer.write(event ?? ByteBuffer(string: ": heartbeat\n\n"))
                pendingWrite.ends()
            }
            // The response's end waits for the socket as any write does: a write just before may have filled it.
            pendingWrite.starts()
            let writer = box.writer
            try await writer.finish(nil)
        }
        let watching = Task { [heartbeat] in
            while !Task.isCancelled {
                try? await Task.sleep(for: heartbeat)
                if pendingWrite.hasWaited(atLeast: heartbeat * 2) { writing.cancel() }
            }
        }
        defer { watching.cancel() }
        try await withGracefulShutdownHandler {
            try await withTaskCancellationHandler {
                try await writing.value
            } onCancel: {
                writing.cancel()
            }
        } onGracefulShutdown: {
            end()
            Task {
                try? await Task.sleep(for: .seconds(1))
                writing.cancel()
            }
        }
    }
}

/// The response's writer, handed to the task that writes the events and the end.
///
/// `@unchecked Sendable`, safe because one task uses it: the response's task stores it before creating the writing
/// task (creation orders the store before that task's first use), and does not touch it after. No other task is
/// given it.
private final class WriterBox: @unchecked Sendable {
    var writer: any ResponseBodyWriter

    init(_ writer: any ResponseBodyWriter) {
        self.writer = writer
    }
}

/// When the write in progress, if any, began.
private final class PendingWrite: Sendable {
    private let start = Mutex<ContinuousClock.Instant?>(nil)

    func starts() {
        start.withLock { $0 = .now }
    }

    func ends() {
        start.withLock { $0 = nil }
    }

    func hasWaited(atLeast duration: Duration) -> Bool {
        start.withLock { start in start.map { $0.duration(to: .now) >= duration } ?? false }
    }
}
