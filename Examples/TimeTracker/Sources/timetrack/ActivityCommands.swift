import ArgumentParser
import Foundation
import TimeTrackerCore

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a project's activities, newest first.")
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var time: TimeZoneOption
    @Argument(help: "The project's name (any case).") var name: String
    @Option(help: "How many activities to show (at most 500).") var limit = 20
    @Flag(help: #"Print JSON: [{"id":…,"projectID":…,"startedAt":…,"stoppedAt":…}], times in seconds since 1970."#)
    var json = false

    func run() async throws {
        let activities = try await database.withTracker { tracker in
            try await tracker.activities(of: try tracker.project(named: name).id, limit: limit)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try StandardOutput.show(String(decoding: try encoder.encode(activities.map(ActivityPayload.init)), as: UTF8.self) + "\n")
            return
        }
        guard !activities.isEmpty else { return try StandardOutput.show("No activities yet.\n") }
        let now = Date()
        let rows = activities.map { activity in
            [
                "\(activity.id)", time.text(activity.startedAt), activity.stoppedAt.map(time.text) ?? "running",
                ClockFormat.duration(activity.duration(at: now)),
            ]
        }
        try StandardOutput.show(TextTable.text(header: ["ID", "START", "STOP", "DURATION"], rows: rows))
    }
}

struct Log: ProjectCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add a finished activity by hand, for time tracked elsewhere.",
        discussion: "It must stop after it starts, not be in the future, and overlap none of the project's activities."
    )
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var time: TimeZoneOption
    @Argument(help: "The project's name (any case).") var name: String
    @Option(help: "When it started: 14:30 (today), 2026-11-28 14:30, or ISO 8601.") var from: String
    @Option(help: "When it stopped, written as --from.") var to: String

    func perform(on tracker: TimeTracker) async throws -> String {
        let (start, stop) = (try time.date(from), try time.date(to))
        let project = try await tracker.perform(
            .addActivity(projectID: try tracker.project(named: name).id, startedAt: start, stoppedAt: stop)
        )
        return "Logged \(ClockFormat.duration(stop.timeIntervalSince(start))) on \"\(project?.name ?? name)\" "
            + "(\(time.text(start)) to \(time.text(stop)))."
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change an activity's start and stop (ids are in `timetrack history`).",
        discussion: "The same rules as log. A running activity takes only --from; a finished one needs both."
    )
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var time: TimeZoneOption
    @Argument(help: "The activity's id.") var id: Int64
    @Option(help: "Its start: 14:30 (today), 2026-11-28 14:30, or ISO 8601.") var from: String
    @Option(help: "Its stop, written as --from.") var to: String?

    func run() async throws {
        let (start, stop) = (try time.date(from), try to.map { try time.date($0) })
        let project = try await database.withTracker { try await $0.perform(.editActivity(id: id, startedAt: start, stoppedAt: stop)) }
        StandardOutput.report(
            "Activity \(id) of \"\(project?.name ?? "its project")\" is now \(time.text(start)) to "
                + "\(stop.map(time.text) ?? "now (running)").\n"
        )
    }
}

struct DeleteActivity: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete-activity", abstract: "Delete one activity (ids are in `timetrack history`)."
    )
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "The activity's id.") var id: Int64

    func run() async throws {
        let project = try await database.withTracker { try await $0.perform(.deleteActivity(id: id)) }
        StandardOutput.report("Deleted activity \(id) of \"\(project?.name ?? "its project")\".\n")
    }
}
