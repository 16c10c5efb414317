// A helper for the exit and termination tests: a persisted store with changes pending in a long coalescing window,
// ended in one of two ways. Usage: StatehouseExitWriter DIRECTORY KEY MODE
//   exit-in-reducer  sets the count to 41, then calls exit(0) from inside the reducer of a later action;
//   sigterm          calls StatehouseLifecycle.flushOnTermination(), sets the count to 41, prints "ready" and waits
//                    for SIGTERM (or SIGINT); it ends by itself after ten minutes.
// The window and the wait are long so that a test on a busy machine, however slow to send its signal, still finds the
// change pending.
import Foundation
import Statehouse

struct Tally: Codable, Sendable {
    var count = 0
}

enum TallyAction: Sendable {
    case set(Int)
    case exitInside(Int)
}

let arguments = CommandLine.arguments
guard arguments.count == 4, ["exit-in-reducer", "sigterm"].contains(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: StatehouseExitWriter DIRECTORY KEY exit-in-reducer|sigterm\n".utf8))
    exit(2)
}
if arguments[3] == "sigterm" { StatehouseLifecycle.flushOnTermination() }
let store = Store(
    initialState: Tally(), key: arguments[2], storage: .file(directory: URL(fileURLWithPath: arguments[1])),
    writes: .coalesced(window: .seconds(3_600)), externalChanges: .ignore
) { (state: inout Tally, action: TallyAction) in
    switch action {
    case .set(let count):
        state.count = count
    case .exitInside(let count):
        state.count = count
        exit(0)
    }
}
store.dispatch(.set(41))
if arguments[3] == "exit-in-reducer" {
    store.dispatch(.exitInside(42))
} else {
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    Thread.sleep(forTimeInterval: 600)
}
