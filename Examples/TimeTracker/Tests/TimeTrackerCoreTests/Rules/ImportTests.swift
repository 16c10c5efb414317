import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// Export and import: the formats read back what they wrote, and an import adds what the tracker lacks under the
/// rules, all or nothing, once.
@Suite("Export and import", .serialized)
struct ImportTests {
    private static let rows = [
        ExportRow(project: "Read, \"think\"", created: 1_700_000_000.25),
        ExportRow(project: "Read, \"think\"", startedAt: 1_700_000_100, stoppedAt: 1_700_000_700.5),
        ExportRow(project: "Writing", created: 1_700_000_001),
        ExportRow(project: "Writing", startedAt: 1_700_000_100),
    ]

    @Test func bothFormatsReadBackWhatTheyWrote() throws {
        for text in [TrackerExport.jsonLines(Self.rows), TrackerExport.csv(Self.rows)] {
            let read = try TrackerExport.rows(from: text)
            #expect(read.map(\.project) == Self.rows.map(\.project))
            #expect(read.map(\.startedAt) == Self.rows.map(\.startedAt) && read.map(\.stoppedAt) == Self.rows.map(\.stoppedAt))
            #expect(read.map(\.created) == Self.rows.map(\.created))
            #expect(TrackerExport.jsonLines(read) == TrackerExport.jsonLines(Self.rows))
        }
        #expect(TrackerExport.csv(Self.rows).contains(#""Read, ""think""",2023-11-14T22:13:20.250000Z,,"#))
    }

    /// Windows line ends read as any; an empty tracker's export (an empty file) is nothing to import; an activity of
    /// less than a millisecond keeps a stop after its start.
    @Test func lineEndsAnEmptyFileAndTinyActivitiesReadBack() throws {
        let tiny = [ExportRow(project: "W", created: 1_700_000_000), ExportRow(project: "W", startedAt: 1_700_000_000.0001, stoppedAt: 1_700_000_000.0003)]
        let text = TrackerExport.csv(tiny)
        let read = try TrackerExport.rows(from: text.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(read.count == 2 && TrackerExport.csv(read) == text)
        #expect((read[1].stoppedAt ?? 0) > (read[1].startedAt ?? 0))
        #expect(try TrackerExport.rows(from: "").isEmpty)
    }

    @Test(arguments: [
        ("project,created,startedAt,stoppedAt\nWriting,,yesterday,\n", 2, "\"yesterday\" is not a time"),
        ("project,created,startedAt,stoppedAt\nWriting,,2026-02-30T10:00:00Z,\n", 2, "is not a time"),
        ("project,created,startedAt,stoppedAt\nWriting,,\n", 2, "a row has 4 fields, this one 3."),
        ("project,created,startedAt,stoppedAt\nWriting,,,\n\"Open,,,\n", 3, "a quoted field does not end."),
        ("name,start\nWriting,1\n", 1, "a CSV export begins with the line"),
        ("{\"project\": \"Writing\"}\n[1]\n", 2, "not an object such as"),
        ("{\"project\": \"Writing\", \"stoppedAt\": \"2026-11-28T09:00:00Z\"}\n", 1, "an activity's row has a startedAt."),
    ])
    func aLineThatIsNotARowIsNamed(text: String, line: Int, reason: String) {
        #expect {
            try TrackerExport.rows(from: text)
        } throws: { error in
            guard case .importRefused(let refusedLine, let refusal) = error as? TrackerError else { return false }
            return refusedLine == line && refusal.contains(reason)
        }
    }

    /// An import adds the projects (matched ignoring case) and activities the tracker lacks; the same file again
    /// changes nothing; one undo takes the import back.
    @Test(arguments: TestBackend.allCases)
    func anImportAddsWhatIsMissingOnceAndUndoesAsOne(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        try await tracker.perform(.addProject(name: "WRITING"))
        try await tracker.perform(.importRows(Self.rows))
        #expect(tracker.store.state.projects.map(\.name) == ["Read, \"think\"", "WRITING"])
        #expect(tracker.store.state.projects.first?.elapsedSeconds == 600.5)
        #expect(tracker.store.state.project(named: "writing")?.isRunning == true)
        #expect(tracker.store.state.undoName == "Import of 2 activities")
        let exported = try await tracker.exportRows()
        try await tracker.perform(.importRows(try TrackerExport.rows(from: TrackerExport.csv(exported))))
        #expect(try await tracker.exportRows() == exported)
        #expect(tracker.store.state.undoName == "Import of 2 activities")
        try await tracker.perform(.undo)
        #expect(tracker.store.state.projects.map(\.name) == ["WRITING"])
        #expect(try database.count("activity") == 0)
    }

    /// A row against the rules refuses the whole import, naming its line: nothing before it is written either.
    @Test(arguments: TestBackend.allCases)
    func aRowAgainstTheRulesRefusesTheWholeImport(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        var rows = try TrackerExport.rows(from: TrackerExport.jsonLines(Self.rows))
        rows.append(ExportRow(line: 5, project: "Writing", startedAt: 1_700_000_050, stoppedAt: 1_700_000_200))
        // The running activity of line 4, which this import added: named by its line.
        await #expect(throws: TrackerError.importRefused(line: 5, reason: "It overlaps the activity of line 4 (\"Writing\").")) {
            try await tracker.perform(.importRows(rows))
        }
        rows[rows.count - 1] = ExportRow(line: 5, project: " ", created: 0)
        await #expect(throws: TrackerError.importRefused(line: 5, reason: TrackerError.emptyName.description)) {
            try await tracker.perform(.importRows(rows))
        }
        rows[rows.count - 1] = ExportRow(line: 5, project: "Later", created: 4_000_000_000)
        await #expect(throws: TrackerError.importRefused(
            line: 5, reason: "A project cannot be added before 1970 or in the future."
        )) {
            try await tracker.perform(.importRows(rows))
        }
        // Two rows of the file that overlap: the refusal names the other's line, not an id it rolled back.
        rows[rows.count - 1] = ExportRow(line: 5, project: "Read, \"think\"", startedAt: 1_700_000_200, stoppedAt: 1_700_000_300)
        await #expect(throws: TrackerError.importRefused(line: 5, reason: "It overlaps the activity of line 2 (\"Read, \"think\"\").")) {
            try await tracker.perform(.importRows(rows))
        }
        #expect(tracker.store.state.projects.isEmpty && tracker.store.state.undoName == nil)
        #expect(try database.count("activity") == 0)
    }
}
