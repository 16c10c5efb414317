import Foundation

/// Reads `GET /api/events` from a server on this machine over a plain socket, as a page's EventSource would.
///
/// Blocking, with a short receive timeout, so that a test can wait for an event with a deadline.
public final class EventStreamClient {
    private let connection: RawConnection
    private var socket: Int32 { connection.socket }
    private var received = ""

    public init(port: Int, path: String = "/api/events") throws {
        connection = try RawConnection(port: port)
        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
        connection.send(request)
    }

    /// The `data:` of the next event that satisfies `predicate`, or `nil` once `timeout` passed. Events before it
    /// are consumed. The default deadline is generous: an event that is sure to come can take seconds on a busy
    /// machine (5 s timed out in 2 of 4 full runs while other builds ran); waiting ends as soon as it arrives.
    public func next(timeout: Duration = .seconds(60), where predicate: (String) -> Bool = { _ in true }) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            while let end = received.range(of: "\n\n") {
                let event = received[..<end.lowerBound]
                received.removeSubrange(..<end.upperBound)
                // Each event is written as one HTTP chunk, so a data line is never split by chunk framing.
                for line in event.split(separator: "\n") where line.hasPrefix("data: ") {
                    let data = String(line.dropFirst("data: ".count))
                    if predicate(data) { return data }
                }
            }
            guard ContinuousClock.now < deadline else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(socket, &buffer, buffer.count, 0)
            if count > 0 {
                received += String(decoding: buffer[..<count], as: UTF8.self)
            } else if count == 0 {
                return nil  // the server closed the stream
            }
        }
    }

    /// Whether the server ends the stream within `timeout`: it sends the response's last chunk, or closes the
    /// connection. What comes before is read and dropped.
    public func ends(within timeout: Duration = .seconds(60)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if received.hasSuffix("\r\n0\r\n\r\n") || received.hasPrefix("0\r\n\r\n") { return true }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(socket, &buffer, buffer.count, 0)
            if count > 0 {
                received += String(decoding: buffer[..<count], as: UTF8.self)
            } else if count == 0 {
                return true
            }
        }
        return false
    }
}
