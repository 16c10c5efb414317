import ArgumentParser
import Foundation
import Statehouse

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
        subcommands: [
            Add.self, Rename.self, Start.self, Stop.self, Delete.self, Undo.self, Redo.self, List.self, Watch.self,
            History.self, Log.self, Edit.self, DeleteActivity.self, Report.self, Export.self, Import.self,
            Serve.self, Sync.self, Record.self, MakeTest.self,
        ]
    )

    static func main() async {
        StandardOutput.holdClosedStandardDescriptors()
        // Every write timetrack makes is a transaction that ends before the command answers, so no change waits in
        // a coalescing window today; should a persisted container or store join, Ctrl-C or a SIGTERM still writes
        // it. `serve` handles both signals itself, to shut down gracefully, and flushes after; `record` handles them
        // too, to write what it caught up with last, and `watch`, to give the terminal back.
        if !["serve", "record", "watch"].contains(CommandLine.arguments.dropFirst().first) {
            StatehouseLifecycle.flushOnTermination()
        }
        await main(nil)
    }
}
