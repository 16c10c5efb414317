import ArgumentParser
import Statehouse
import TimeTrackerCore

/// `undo` and `redo`: a step through the undo history the database keeps, whichever process made the change.
protocol UndoStepCommand: AsyncParsableCommand {
    var database: DatabaseOptions { get }
    static var action: TrackerAction { get }
    /// The line printed, from the name of the change the step went through.
    static func report(_ change: String) -> String
    /// That name, in the state after the step: undo puts it on top of the redo stack, redo on top of the undo stack.
    static func name(in state: TrackerState) -> String?
}

extension UndoStepCommand {
    func run() async throws {
        let line = try await database.withTracker { tracker in
            try await tracker.perform(Self.action)
            return Self.report(Self.name(in: tracker.store.state) ?? "the change")
        }
        StandardOutput.report(line + "\n")
    }
}

struct Undo: UndoStepCommand {
    static let configuration = CommandConfiguration(
        abstract: "Take back the last change (to a project or an activity), whichever process made it."
    )
    @OptionGroup var database: DatabaseOptions
    static let action = TrackerAction.undo
    static func report(_ change: String) -> String { "Undid \"\(change)\"." }
    static func name(in state: TrackerState) -> String? { state.redoName }
}

struct Redo: UndoStepCommand {
    static let configuration = CommandConfiguration(abstract: "Make again the last change undo took back.")
    @OptionGroup var database: DatabaseOptions
    static let action = TrackerAction.redo
    static func report(_ change: String) -> String { "Redid \"\(change)\"." }
    static func name(in state: TrackerState) -> String? { state.undoName }
}
