import ArgumentParser
import TimeTrackerCore

/// A command that performs one action on the project named on the command line and prints what it did.
protocol ProjectCommand: AsyncParsableCommand {
    var database: DatabaseOptions { get }
    var name: String { get }

    /// Performs the action; returns the line to print.
    func perform(on tracker: TimeTracker) async throws -> String
}

extension ProjectCommand {
    func run() async throws {
        let line = try await database.withTracker { tracker in try await perform(on: tracker) }
        StandardOutput.report(line + "\n")
    }
}

struct Add: ProjectCommand {
    static let configuration = CommandConfiguration(abstract: "Add a project.")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "The project's name: unique, ignoring case.") var name: String

    func perform(on tracker: TimeTracker) async throws -> String {
        let project = try await tracker.perform(.addProject(name: name))
        return "Added \"\(project?.name ?? name)\"."
    }
}

struct Start: ProjectCommand {
    static let configuration = CommandConfiguration(abstract: "Start an activity on a project.")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "The project's name (any case).") var name: String

    func perform(on tracker: TimeTracker) async throws -> String {
        let project = try await tracker.perform(.startActivity(projectID: try tracker.project(named: name).id))
        let since = project?.runningSince.map { " at \(ClockFormat.timeOfDay($0))" } ?? ""
        return "Started \"\(project?.name ?? name)\"\(since)."
    }
}

struct Stop: ProjectCommand {
    static let configuration = CommandConfiguration(abstract: "Stop the running activity of a project.")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "The project's name (any case).") var name: String

    func perform(on tracker: TimeTracker) async throws -> String {
        let project = try await tracker.perform(.stopActivity(projectID: try tracker.project(named: name).id))
        let total = project.map { ": \(ClockFormat.duration($0.elapsedSeconds)) in all" } ?? ""
        return "Stopped \"\(project?.name ?? name)\"\(total)."
    }
}

struct Delete: ProjectCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a project and all its activities.")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "The project's name (any case).") var name: String

    func perform(on tracker: TimeTracker) async throws -> String {
        let project = try tracker.project(named: name)
        try await tracker.perform(.deleteProject(id: project.id))
        return "Deleted \"\(project.name)\"."
    }
}

struct Rename: ProjectCommand {
    static let configuration = CommandConfiguration(abstract: "Give a project another name.")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "The project's name (any case).") var name: String
    @Argument(help: "Its new name: unique, ignoring case, among the other projects.") var newName: String

    func perform(on tracker: TimeTracker) async throws -> String {
        let project = try tracker.project(named: name)
        let renamed = try await tracker.perform(.renameProject(id: project.id, name: newName))
        return "Renamed \"\(project.name)\" to \"\(renamed?.name ?? newName)\"."
    }
}
