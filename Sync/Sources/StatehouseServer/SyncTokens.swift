import Crypto
import Foundation

/// The tokens a ``SyncServer`` accepts, each with what it may read and write.
///
/// The server keeps the SHA-256 of each token, never the token, and compares a presented token's digest with every
/// kept one in constant time: how long the check takes tells nothing of how much of a token was right.
public struct SyncTokens: Sendable {
    struct Kept: Sendable {
        var digest: [UInt8]
        var grant: SyncGrant
    }

    let kept: [Kept]

    /// - Parameter grants: One per token. Tokens must be at least 16 characters: shorter ones are guessed.
    /// - Throws: ``SyncServerError/weakToken(_:)`` for a shorter token.
    public init(_ grants: [SyncGrant]) throws(SyncServerError) {
        var kept: [Kept] = []
        for grant in grants {
            guard grant.token.utf8.count >= 16 else { throw .weakToken(grant.name) }
            kept.append(Kept(digest: Self.digest(grant.token), grant: grant.forgettingToken()))
        }
        self.kept = kept
    }

    /// Tokens from their digests (``SyncGrant/digestHex(of:)``), for a server that must not hold the tokens themselves.
    public init(digests: [(hex: String, grant: SyncGrant)]) throws(SyncServerError) {
        var kept: [Kept] = []
        for (hex, grant) in digests {
            guard let digest = Self.bytes(hex: hex), digest.count == SHA256.byteCount else { throw .badDigest(grant.name) }
            kept.append(Kept(digest: digest, grant: grant.forgettingToken()))
        }
        self.kept = kept
    }

    /// The grant of `token`, or `nil` if no kept digest matches. Looks at every kept digest whatever it finds.
    func grant(for token: String) -> SyncGrant? {
        let presented = Self.digest(token)
        var found: SyncGrant?
        for candidate in kept where Self.constantTimeEqual(candidate.digest, presented) {
            found = candidate.grant
        }
        return found
    }

    static func digest(_ token: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(token.utf8)))
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

/// One token and what it may do.
public struct SyncGrant: Sendable {
    /// What a token may do with a store or a container.
    public enum Access: Sendable, Equatable {
        case read
        case readWrite
    }

    /// A name for the token, given to ``SyncCaller`` and to logs; never the token.
    public let name: String
    let token: String
    let stores: [String: Access]
    let containers: [String: Access]
    let everything: Access?

    /// - Parameters:
    ///   - name: What logs and the `authorize` hook call the token's holder.
    ///   - token: The secret, as clients send it (`Authorization: Bearer …`).
    ///   - stores: The stores it may read, or read and push to, by name.
    ///   - containers: The containers it may read, or read and write, by key.
    public init(name: String, token: String, stores: [String: Access] = [:], containers: [String: Access] = [:]) {
        self.init(name: name, token: token, stores: stores, containers: containers, everything: nil)
    }

    /// A token that may read and write every store and container: an administrator's, or a single-user server's.
    public static func everything(name: String, token: String) -> SyncGrant {
        SyncGrant(name: name, token: token, stores: [:], containers: [:], everything: .readWrite)
    }

    private init(name: String, token: String, stores: [String: Access], containers: [String: Access], everything: Access?) {
        self.name = name
        self.token = token
        self.stores = stores
        self.containers = containers
        self.everything = everything
    }

    /// The hexadecimal SHA-256 of `token`, for ``SyncTokens/init(digests:)``.
    public static func digestHex(of token: String) -> String {
        SyncTokens.digest(token).map { String(format: "%02x", $0) }.joined()
    }

    func forgettingToken() -> SyncGrant {
        SyncGrant(name: name, token: "", stores: stores, containers: containers, everything: everything)
    }

    func mayRead(store: String) -> Bool { everything != nil || stores[store] != nil }
    func mayWrite(store: String) -> Bool { everything == .readWrite || stores[store] == .readWrite }
    func mayRead(container: String) -> Bool { everything != nil || containers[container] != nil }
    func mayWrite(container: String) -> Bool { everything == .readWrite || containers[container] == .readWrite }
}
