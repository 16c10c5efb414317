import Foundation

/// Reads `GET /api/events` from a server on this machine over a plain socket, as a page's EventSource would.
///
/// Blocking, with a short receive timeout, so that a test can wait for an event with a deadline.
public final class EventStreamClient {
    private let socket: Int32
    private var received = ""

    public init(port: Int, path: String = "/api/events") throws {
        #if canImport(Glibc)
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot connect to port \(port)"])
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
        _ = request.withCString { send(socket, $0, strlen($0), 0) }
    }

    deinit {
        close(socket)
    }

    /// The `data:` of the next event that satisfies `predicate`, or `nil` once `timeout` passed. Events before it
    /// are consumed.
    public func next(timeout: Duration = .seconds(5), where predicate: (String) -> Bool = { _ in true }) -> String? {
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
}
