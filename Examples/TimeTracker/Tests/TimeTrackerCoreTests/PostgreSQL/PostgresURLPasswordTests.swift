#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Testing
import TimeTrackerCore

/// `--database` URLs whose password holds a character that ends the part of the URL it is in (`/`, `?`, `#`) unless
/// written `%2F`, `%3F`, `%23`: the rest of the password is then read as a port, a database name or an option, and
/// must not be repeated in the refusal.
@Suite("A password in the wrong place of a --database URL")
struct PostgresURLPasswordTests {
    @Test(arguments: [
        "postgres://tracker:2024/Hunter2secret@db.example/timetrack",
        "postgres://tracker:2024/Hunter2secret@db.example",
        "postgres://tracker:443?Hunter2secret@db.example/timetrack",
        "postgres://tracker:8#Hunter2secret@db.example/timetrack",
    ])
    func aPasswordInTheWrongPlaceIsNeverRepeated(url: String) async throws {
        await #expect {
            _ = try await TimeTracker.open(postgres: url)
        } throws: { error in
            let message = "\(error)"
            return !message.contains("Hunter2") && !message.contains("secret")
        }
    }
}
#endif
