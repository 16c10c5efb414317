import Foundation

/// A second host for a test: a network namespace of its own, joined to this one by a pair of virtual Ethernet
/// devices on a /24 of their own. Made with `ip` (iproute2), which needs root; removed when let go.
final class NetworkNamespace: Sendable {
    static let ip = URL(fileURLWithPath: ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    } ?? "/usr/sbin/ip")

    /// Whether this machine lets the tests make one: root, and iproute2.
    static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: ip.path)
    }

    let name: String
    /// This host's address on the link, and the other host's.
    let hostAddress: String
    let guestAddress: String
    private let hostDevice: String

    init() throws {
        // Interface names have at most 15 characters; the subnet and the names differ between tests and runs.
        let tag = UInt16.random(in: 0...UInt16.max)
        let subnet = "10.\(200 + Int(tag % 50)).\(Int(tag >> 8))"
        name = "statehouse-\(String(tag, radix: 16))"
        hostDevice = "shh\(String(tag, radix: 16))"
        let guestDevice = "shg\(String(tag, radix: 16))"
        hostAddress = "\(subnet).1"
        guestAddress = "\(subnet).2"
        try Self.run(["netns", "add", name])
        do {
            try Self.run(["link", "add", hostDevice, "type", "veth", "peer", "name", guestDevice])
            try Self.run(["link", "set", guestDevice, "netns", name])
            try Self.run(["addr", "add", "\(hostAddress)/24", "dev", hostDevice])
            try Self.run(["link", "set", hostDevice, "up"])
            try Self.run(["netns", "exec", name, Self.ip.path, "addr", "add", "\(guestAddress)/24", "dev", guestDevice])
            try Self.run(["netns", "exec", name, Self.ip.path, "link", "set", guestDevice, "up"])
            try Self.run(["netns", "exec", name, Self.ip.path, "link", "set", "lo", "up"])
        } catch {
            remove()
            throw error
        }
    }

    deinit {
        remove()
    }

    /// Takes this host's end of the link down (new connections fail at once: no route) or brings it back up.
    func setLink(up: Bool) throws {
        try Self.run(["link", "set", hostDevice, up ? "up" : "down"])
    }

    private func remove() {
        // Deleting the namespace deletes its end of the pair, and with it this one.
        try? Self.run(["link", "del", hostDevice])
        try? Self.run(["netns", "del", name])
    }

    struct CommandFailed: Error, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var description: String { "ip \(arguments.joined(separator: " ")) exited with \(status)" }
    }

    private static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = ip
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CommandFailed(arguments: arguments, status: process.terminationStatus) }
    }
}
