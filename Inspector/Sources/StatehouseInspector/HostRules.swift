/// How the inspector reads a request's `Host` and compares a token: public so that another server of the same program
/// (timetrack's page) refuses exactly the requests the inspector refuses.
public enum HostRules {
    /// `host`, `host:port`, `[::1]:port` or `::1`, as a lowercase host name without port or brackets.
    public static func hostname(of authority: String) -> String {
        let lowered = authority.lowercased()
        if lowered.hasPrefix("["), let end = lowered.firstIndex(of: "]") {
            return String(lowered[lowered.index(after: lowered.startIndex)..<end])
        }
        // More than one colon and no brackets: a bare IPv6 address, which has no port.
        if lowered.filter({ $0 == ":" }).count > 1 { return lowered }
        return String(lowered.split(separator: ":", maxSplits: 1).first ?? "")
    }

    /// Whether `host` (an address or a name, without port) is this machine's loopback, which only this machine reaches.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Whether `presented` is `expected`, compared in time that does not depend on where the two differ, so that
    /// timing does not reveal the token.
    public static func tokenMatches(_ presented: String?, _ expected: String) -> Bool {
        guard let presented else { return false }
        let left = Array(presented.utf8), right = Array(expected.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
