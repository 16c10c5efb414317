import ArgumentParser
import Foundation

/// `timetrack`: the command line of the time tracker.
@main
struct TimeTrack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timetrack",
        abstract: "Track the time you spend on projects.",
        discussion: """
            Every command works on one SQLite database, shared by all the processes that use it: a change made by \
            one (another command, a server) shows in every `watch` and every open page within a second.
            """,
        subcommands: [Add.self, Start.self, Stop.self, Delete.self, List.self, Watch.self, Serve.self]
    )

    static func main() async {
        StandardOutput.holdClosedStandardDescriptors()
        await main(nil)
    }
}
