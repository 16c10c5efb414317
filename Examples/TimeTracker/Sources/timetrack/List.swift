import ArgumentParser
import Foundation
import Statehouse
import TimeTrackerCore

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the projects with their elapsed time.")

    @OptionGroup var database: DatabaseOptions
    @Flag(help: #"Print JSON: [{"id":…,"name":…,"elapsedSeconds":…,"running":…}]."#) var json = false

    func run() async throws {
        let projects = try await database.withTracker { $0.store.state.projects }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let payload = projects.map { ProjectPayload($0, includingStart: false) }
            try StandardOutput.show(String(decoding: try encoder.encode(payload), as: UTF8.self) + "\n")
        } else {
            try StandardOutput.show(ProjectTable(projects).text)
        }
    }
}
