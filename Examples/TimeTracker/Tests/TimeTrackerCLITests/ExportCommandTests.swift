import Foundation
import Testing
import TimeTrackerTestSupport

/// `timetrack export` and `import` from the command line.
@Suite("export and import")
struct ExportCommandTests {
    /// Export, delete everything, import, export again: the same bytes, in either format.
    @Test(arguments: [["--json"], ["--csv"]])
    func anExportImportedAfterDeletingEverythingExportsTheSameBytes(format: [String]) throws {
        let database = TemporaryDatabase()
        let db = ["--db", database.path]
        for command in [
            ["add", "Writing"], ["add", "Read, \"think\""], ["start", "writing"], ["stop", "writing"],
            ["log", "read, \"think\"", "--from", "2026-11-20 09:00", "--to", "2026-11-20 10:00"], ["start", "writing"],
        ] {
            #expect(try TimetrackProcess.run(command + db).status == 0)
        }
        let exported = try TimetrackProcess.run(["export"] + format + db).output
        for name in ["Writing", "Read, \"think\""] { _ = try TimetrackProcess.run(["delete", name] + db) }
        #expect(try TimetrackProcess.run(["export"] + format + db).output == (format == ["--csv"] ? "project,created,startedAt,stoppedAt\n" : ""))
        let file = database.directory.appendingPathComponent("export")
        try Data(exported.utf8).write(to: file)
        #expect(try TimetrackProcess.run(["import", file.path] + db).output == "Imported 2 projects and 3 activities.\n")
        #expect(try TimetrackProcess.run(["export"] + format + db).output == exported)
        #expect(try TimetrackProcess.run(["import", file.path] + db).output == "Nothing to import: the tracker has it all.\n")
    }

    @Test func aBadRowIsNamedAndNothingIsImported() throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        let file = database.directory.appendingPathComponent("export.csv")
        try Data("""
            project,created,startedAt,stoppedAt
            Writing,2026-11-20T09:00:00.000Z,,
            Writing,,2026-11-20T09:00:00.000Z,2026-11-20T08:00:00.000Z

            """.utf8).write(to: file)
        let result = try TimetrackProcess.run(["import", file.path, "--db", database.path])
        #expect(result.status != 0 && result.output.isEmpty)
        #expect(result.errors.contains("Nothing was imported: line 3: An activity stops after it starts."))
        #expect(try TimetrackProcess.run(["list", "--db", database.path]).output.hasPrefix("No projects yet."))
    }
}
