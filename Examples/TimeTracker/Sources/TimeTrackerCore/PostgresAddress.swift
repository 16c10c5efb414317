#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import NIOSSL
import PostgresNIO

/// A `--database` URL, `postgres://user[:password]@host[:port]/database[?sslmode=…]`, read into a client
/// configuration, and the same URL without its password for every message.
///
/// The URL as given is never repeated (in an error, a log or a page): it may hold a password, and a URL that cannot
/// be read may hold one where it is not expected.
struct PostgresAddress: Sendable {
    let configuration: PostgresClient.Configuration
    private let sslMode: SSLMode
    /// `postgres://user@host:port/database`: what messages say.
    let redacted: String

    /// Whether `text` is meant as a PostgreSQL URL (and not, say, a file named so).
    static func isPostgresURL(_ text: String) -> Bool {
        ["postgres://", "postgresql://"].contains { text.lowercased().hasPrefix($0) }
    }

    init(_ url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(TrackerError) {
        let example = "Give --database a URL such as postgres://user@host:5432/database."
        // A password holding / ? or # (not written %2F %3F %23) ends the server's part early: the rest of it is read
        // as the database, an option or a fragment, and its first characters as the port. The @ that ended the
        // user's part then comes after the server's: such a URL is refused without repeating any of it.
        guard Self.isPostgresURL(url), let parts = URLComponents(string: url),
              !([parts.percentEncodedPath, parts.percentEncodedQuery ?? ""].contains { $0.contains("@") }),
              parts.fragment == nil
        else {
            throw .unusableDatabase(
                path: "the --database URL", problem: "it is not a postgres:// URL that can be read",
                fix: example + " Characters such as @ / : ? # in a user name or password are written %40 %2F %3A %3F %23."
            )
        }
        let host = parts.host ?? ""
        let port = parts.port ?? 5432
        let user = parts.user ?? ""
        let database = String(parts.path.drop { $0 == "/" })
        let redacted = "postgres://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
        func refuse(_ problem: String, _ fix: String = example) -> TrackerError {
            .unusableDatabase(path: redacted, problem: problem, fix: fix)
        }
        guard !host.isEmpty else { throw refuse("it names no server") }
        guard (1...65_535).contains(port) else { throw refuse("its port is not between 1 and 65535") }
        guard !user.isEmpty else { throw refuse("it names no user") }
        guard !database.isEmpty, !database.contains("/") else { throw refuse("it names no database (the part after the last /)") }
        var sslMode = SSLMode.prefer
        for item in parts.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw refuse("timetrack does not know its option \"\(item.name)\"", "Leave it out; sslmode is the only option.")
            }
            guard let mode = item.value.flatMap(SSLMode.init(rawValue:)) else {
                throw refuse("its sslmode is not disable, prefer or require", "Use one of those three.")
            }
            sslMode = mode
        }
        self.sslMode = sslMode
        self.redacted = redacted
        let tls: PostgresClient.Configuration.TLS = switch sslMode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: parts.password ?? environment["PGPASSWORD"],
            database: database, tls: tls
        )
        configuration.options.additionalStartupParameters = Self.startupParameters
        // The pool's keep-alive query has no deadline, and while it waits the pool counts its connection as soon
        // available instead of opening another: a pooled connection that died without a word (a NAT forgot it) kept
        // every lease waiting behind its unanswered keep-alive for good, and changes were never read again. Without
        // it, a dead idle connection is closed by the first statement that times out on it, or at its idle timeout.
        configuration.options.keepAliveBehavior = nil
        self.configuration = configuration
    }

    /// Names go to the server and come back as UTF-8, whatever client encoding the server, the database or the
    /// user's role would set otherwise: with `LATIN1`, a name was stored as Latin-1 read from its UTF-8 bytes
    /// (garbled for every other program), and a name another program wrote that has no Latin-1 form made every
    /// read fail.
    private static let startupParameters = [("client_encoding", "UTF8")]

    /// The same server, user and database, for one connection of its own (which reports why it cannot connect at
    /// once, where the client's pool keeps trying).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS = switch sslMode {
        case .disable: .disable
        case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        var connection = PostgresConnection.Configuration(
            host: configuration.host ?? "", port: configuration.port ?? 5432, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: tls
        )
        connection.options.additionalStartupParameters = Self.startupParameters
        return connection
    }

    private enum SSLMode: String, Sendable {
        case disable, prefer, require
    }
}
#endif
