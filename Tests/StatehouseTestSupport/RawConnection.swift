import Foundation

/// A TCP connection to a server on this machine's loopback, written to byte for byte: what a browser, a slow client or
/// an attacker sends, half a request included.
public final class RawConnection: Sendable {
    public let socket: Int32

    /// - Parameter receiveBuffer: The socket's receive buffer, in bytes, set before it connects: a small one makes a
    ///   reader that stops reading fill up after a few kilobytes (a stalled page, a phone gone from the network).
    public init(port: Int, receiveBuffer: Int32? = nil) throws {
        #if canImport(Glibc)
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        if var receiveBuffer {
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard socket >= 0, connected == 0 else {
            close(socket)
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot connect to port \(port)"])
        }
    }

    deinit {
        close(socket)
    }

    public func send(_ text: String) {
        _ = text.withCString { Foundation.send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// What arrives within `timeout`, until the server closes the connection or `enough` says so.
    public func receive(timeout: Duration = .seconds(10), until enough: (String) -> Bool = { _ in false }) -> String {
        var received = ""
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !enough(received) {
            guard waitForInput(until: deadline) else { break }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += String(decoding: buffer[..<count], as: UTF8.self)
        }
        return received
    }

    /// Whether the server closed the connection (or reset it) within `timeout`, reading and dropping what it sent.
    public func isClosedByServer(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while waitForInput(until: deadline) {
            var buffer = [UInt8](repeating: 0, count: 4_096)
            if recv(socket, &buffer, buffer.count, 0) <= 0 { return true }
        }
        return false
    }

    private func waitForInput(until deadline: ContinuousClock.Instant) -> Bool {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
        return poll(&descriptor, 1, milliseconds) > 0
    }
}
