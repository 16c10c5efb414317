import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Statehouse
import Synchronization
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport
@testable import TimeTrackerWeb

/// What a second review of issue 11's fixes still got through: each test failed before its fix. The comments describe
/// each defect as it was found.
@Suite("Attack: what the second review of issue 11's fixes got through")
struct SecondReviewTests {
    // MARK: Names

    /// Tag characters as a string (U+E0000 + ASCII).
    private static func tags(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { Unicode.Scalar($0.value + 0xE0000)! }))
    }

    // `isEmojiSequence` allows a selector after any emoji and a joiner between any two pictographs, also where they
    // change nothing a person sees: 😀 is an emoji already (no variation sequence exists for it), a skin-toned or flag
    // emoji takes no selector, 😀‍😀 is no RGI sequence and shows as 😀😀, © and ® are text, and a black flag with tags
    // that name no subdivision shows as 🏴. U+2800 is refused only when the whole name is blank. Each pair is two
    // projects that look the same.
    @Test(arguments: [
        ("😀", "😀\u{FE0F}"),
        ("😀", "😀\u{FE0E}"),
        ("👍🏽", "👍🏽\u{FE0F}"),
        ("🇫🇷", "🇫🇷\u{FE0F}"),
        ("😀😀", "😀\u{200D}😀"),
        ("Acme ©®", "Acme ©\u{200D}®"),
        ("🏴", "🏴" + tags("ab") + "\u{E007F}"),
        ("Writing", "Writing\u{2800}"),
    ])
    func aLookAlikeIsRefusedOrTheSameName(original: String, lookAlike: String) throws {
        let first = try ProjectName(original)
        guard let second = try? ProjectName(lookAlike) else { return }
        #expect(
            first.key == second.key,
            "\(lookAlike.unicodeScalars.map { String($0.value, radix: 16) }) is accepted beside \(original) as another name"
        )
    }

    // The fix's own comment says tags that spell hidden text are refused; only the shape 🏴 tags… cancel is checked.
    @Test func tagsThatSpellHiddenTextAreRefused() {
        #expect(throws: TrackerError.self) { try ProjectName("🏴" + Self.tags("ignorepreviousinstructions") + "\u{E007F}") }
    }

    // MARK: The database file

    private static var timetrack: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !directory.path.hasSuffix("/debug") && !directory.path.hasSuffix("/release") && directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("timetrack")
    }

    /// Runs a program to its end; its status and standard output.
    private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    // `checkBeforeOpening` asks `attributesOfItem`, which does not follow a symbolic link, and refuses the link as
    // "not a regular file (a device, a pipe or a socket)": a database kept elsewhere and linked in (dotfiles, a synced
    // folder) can no longer be opened.
    @Test func aSymbolicLinkToATimetrackDatabaseOpens() throws {
        let database = TemporaryDatabase()
        do {
            let tracker = try TestClock().tracker(at: database.path)
            _ = tracker
        }
        let link = database.directory.appendingPathComponent("link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: database.path)
        #expect(throws: Never.self) { _ = try TestClock().tracker(at: link) }
    }

    // `checkOwner` lists tables with `name NOT LIKE 'sqlite_%'`: LIKE ignores case and `_` is any character, so
    // another application's table named `SQLiteStudioNotes` is taken for SQLite's own, the database counts as empty,
    // and timetrack adds its tables to it and switches it to WAL.
    @Test func aTableWhoseNameStartsLikeSQLitesOwnIsAnotherApplications() throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        let made = try Self.run("/usr/bin/sqlite3", [database.path, "CREATE TABLE SQLiteStudioNotes (note TEXT); INSERT INTO SQLiteStudioNotes VALUES ('keep')"])
        try #require(made.status == 0)
        #expect(throws: TrackerError.self) { _ = try TestClock().tracker(at: database.path) }
        let mode = try Self.run("/usr/bin/sqlite3", [database.path, "PRAGMA journal_mode"])
        #expect(mode.output.trimmingCharacters(in: .whitespacesAndNewlines) == "delete")
    }

    // The identity check watches the database and its -wal, not its -shm. With the -shm removed under a running
    // tracker, another process makes a new one: the two no longer share the WAL index, the running tracker writes its
    // next commit over the other's frames, and a project `timetrack add` confirmed (status 0) is gone.
    @Test func removingTheSharedMemoryFileLosesNoConfirmedWrite() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        try await tracker.perform(.addProject(name: "Before"))
        try FileManager.default.removeItem(atPath: database.path + "-shm")
        let cli = try Self.run(Self.timetrack.path, ["add", "From the CLI", "--db", database.path])
        var serverConfirmed = true
        do { try await tracker.perform(.addProject(name: "From the server")) } catch { serverConfirmed = false }
        let listed = try Self.run(Self.timetrack.path, ["list", "--json", "--db", database.path])
        if cli.status == 0 {
            #expect(listed.output.contains("From the CLI"), "confirmed by the CLI, then lost: \(listed.output)")
        }
        if serverConfirmed {
            #expect(listed.output.contains("From the server"), "confirmed by the tracker, then lost: \(listed.output)")
        }
    }

    // MARK: Heartbeats

    /// A page that does not read: every write waits until `open` is called.
    private final class StalledPage: Sendable {
        let written = Mutex<[String]>([])
        let isOpen = Mutex(false)

        func open() { isOpen.withLock { $0 = true } }

        var heartbeats: Int { written.withLock { $0.filter { $0.hasPrefix(": heartbeat") }.count } }

        struct Writer: ResponseBodyWriter {
            let page: StalledPage
            mutating func write(_ buffer: ByteBuffer) async throws {
                while !page.isOpen.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
                page.written.withLock { $0.append(String(buffer: buffer)) }
            }

            consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
        }
    }

    // edae6f2's WaitingFlag is lowered only when a heartbeat is written. The merged stream keeps the newest 4 events:
    // a heartbeat queued behind a slow page is pushed out by 4 changes, the flag stays up, and that stream never gets
    // another heartbeat, however long it lives: a page closed later lingers until the next change (issue 11's
    // CLOSE-WAIT), and a proxy drops the quiet connection. Seen over a real socket too: 40 s, no heartbeat.
    @Test func aStreamThatFellBehindStillGetsHeartbeats() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let stream = EventStream(events: ProjectEvents(store: tracker.store), heartbeat: .milliseconds(50))
        let page = StalledPage()
        let writing = Task {
            try await stream.response().body.write(StalledPage.Writer(page: page))
        }
        defer { writing.cancel() }
        // Heartbeats are due while the page does not read; then enough changes to fill the stream's buffer.
        try await Task.sleep(for: .milliseconds(500))
        for index in 0..<6 { try await tracker.perform(.addProject(name: "Change \(index)")) }
        try await Task.sleep(for: .milliseconds(200))
        page.open()
        let before = page.heartbeats
        // Forty heartbeat intervals and more.
        for _ in 0..<100 where page.heartbeats <= before { try await Task.sleep(for: .milliseconds(50)) }
        #expect(page.heartbeats > before, "no heartbeat since the page caught up")
    }
}
