import ArgumentParser
import Foundation
import TimeTrackerCore

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every project and activity, to keep or to import elsewhere.",
        discussion: """
            JSON lines by default ({"project", "created"} for a project, {"project", "startedAt", "stoppedAt"} for \
            an activity), or CSV (project,created,startedAt,stoppedAt); times in ISO 8601, UTC.
            """
    )
    @OptionGroup var database: DatabaseOptions
    @Flag(help: "JSON lines (the default).") var json = false
    @Flag(help: "CSV instead.") var csv = false

    func validate() throws {
        guard !(json && csv) else { throw ValidationError("Choose --json or --csv, not both.") }
    }

    func run() async throws {
        let rows = try await database.withTracker { try await $0.exportRows() }
        try StandardOutput.show(csv ? TrackerExport.csv(rows) : TrackerExport.jsonLines(rows))
    }
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add what an export holds and the tracker does not.",
        discussion: """
            Projects are matched by name (ignoring case) and activities by start and stop, so importing a file twice \
            changes nothing. The whole file is checked first, under the rules of add and log: a row against them is \
            named by its line, and nothing is written. One undo takes the import back.
            """
    )
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "A file `timetrack export` wrote (JSON lines or CSV).") var file: String

    func run() async throws {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw ValidationError("Cannot read \(file): \(error.localizedDescription)")
        }
        let rows = try TrackerExport.rows(from: text)
        let (before, after) = try await database.withTracker { tracker in
            let before = try await tracker.exportRows()
            try await tracker.perform(.importRows(rows))
            return (before, try await tracker.exportRows())
        }
        let (projects, activities) = (Self.projects(in: after) - Self.projects(in: before), after.count - before.count)
        StandardOutput.report(
            after == before
                ? "Nothing to import: the tracker has it all.\n"
                : "Imported \(projects) projects and \(activities - projects) activities.\n"
        )
    }

    private static func projects(in rows: [ExportRow]) -> Int {
        rows.count { $0.startedAt == nil }
    }
}
