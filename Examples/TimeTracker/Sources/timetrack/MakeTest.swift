import ArgumentParser
import Foundation
import StatehouseTesting
import TimeTrackerCore

struct MakeTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make-test",
        abstract: "Print a Swift Testing test that replays a session `timetrack record` wrote.",
        discussion: """
            The test sends each recorded action through TestStore with timetrack's rules (TrackerRules) and expects \
            the database's contents it led to; it fails at the first step whose outcome the rules no longer give. \
            Put it in a test target that depends on TimeTrackerCore and StatehouseTesting.
            """
    )

    @Argument(help: "A session written by `timetrack record`.") var file: String
    @Option(help: "The test function's name.") var name = "replaysARecordedTimetrackSession"

    func run() throws {
        let recording = try SessionFile.read(from: URL(fileURLWithPath: file))
        let source = try recording.testSource(
            named: name, reducer: TrackerRules.reducer, writtenAs: "TrackerRules.reducer", imports: ["TimeTrackerCore"]
        )
        try StandardOutput.show(source)
    }
}
