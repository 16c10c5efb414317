import ArgumentParser
import Foundation
import Statehouse
import TimeTrackerCore

/// `timetrack sync --remote URL`: sends what waits, takes the server's state, and says where the copy stands.
struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send the changes made while the server --remote names could not be reached, and take its state.",
        discussion: """
            Prints where the copy stands: in step with the server, changes queued (the server cannot be reached), or \
            changes the server refused (they are undone in the copy). Fails unless the copy is in step.
            """
    )
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard database.remote != nil else {
            throw ValidationError("sync follows a server: give --remote URL (the address `timetrack serve` printed).")
        }
    }

    func run() async throws {
        guard let copy = try await database.openRemoteCopy() else { return }
        let report = try await copy.settle()
        let projects = copy.tracker.store.state.projects.count
        StandardOutput.report(report.line + (report.isInStep ? " \(projects) project\(projects == 1 ? "" : "s").\n" : "\n"))
        if !report.isInStep { throw ExitCode.failure }
    }
}
