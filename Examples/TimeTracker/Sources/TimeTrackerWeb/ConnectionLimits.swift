import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore

/// How many connections the server keeps, and for how long.
///
/// A client that opens connections and sends nothing, or half a request, must not hold the server's descriptors
/// forever; and running out of descriptors must not end the server. So a connection that sends nothing for
/// ``idleTimeout`` (between requests, or in the middle of one) is closed, and at most ``maximumConnections`` are
/// open at once: past that, the server stops accepting until one closes (the excess waits in the kernel's backlog,
/// or is refused by it), always keeping descriptors for the database and the runtime.
public struct ConnectionLimits: Sendable {
    /// Descriptors kept for everything but connections: the database's connections and journal files, the runtime.
    static let reservedDescriptors = 64

    public var idleTimeout: Duration
    public var maximumConnections: Int

    /// - Parameters:
    ///   - idleTimeout: How long a connection may send nothing (an event stream that is being answered is not idle),
    ///     and how long a request body may take to arrive whole (each byte would restart the idle timeout).
    ///   - maximumConnections: The most connections at once; by default as many as the process's descriptor limit
    ///     allows, less those kept for the rest, and at most 10,000.
    public init(idleTimeout: Duration = .seconds(30), maximumConnections: Int? = nil) {
        self.idleTimeout = idleTimeout
        let limit = Self.descriptorLimit()
        // Under a small limit, half of it: connections must keep some room, and the rest too.
        self.maximumConnections = maximumConnections ?? max(1, min(10_000, max(limit / 2, limit - Self.reservedDescriptors)))
    }

    /// Raises the soft limit on open descriptors to the hard one, as servers do (the soft limit is often 1,024 for
    /// historical reasons), and returns it.
    static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_FOR_SWIFT, &limit) == 0 else { return 256 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(RLIMIT_NOFILE_FOR_SWIFT, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    var serverConfiguration: HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(idleTimeout: .nanoseconds(Int64(idleTimeout / .nanoseconds(1))))
    }
}

#if canImport(Glibc)
// Glibc imports RLIMIT_NOFILE as an enum case of `__rlimit_resource`; `getrlimit` takes its raw value.
private let RLIMIT_NOFILE_FOR_SWIFT = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#else
private let RLIMIT_NOFILE_FOR_SWIFT = RLIMIT_NOFILE
#endif
