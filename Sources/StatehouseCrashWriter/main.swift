// A helper for the persistence crash test and the storage conformance suite's crash check on FileStorage: writes
// increasing numbers to a file-backed container, with write-through, until it is killed.
// Usage: StatehouseCrashWriter DIRECTORY KEY PARENT_PID
import Foundation
import Statehouse

let arguments = CommandLine.arguments
guard arguments.count == 4, let parent = Int32(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: StatehouseCrashWriter DIRECTORY KEY PARENT_PID\n".utf8))
    exit(2)
}
let counter = StateContainer(
    0, key: arguments[2], storage: .file(directory: URL(fileURLWithPath: arguments[1])), writes: .writeThrough
)
counter.update { $0 += 1 }  // written (write-through) before "ready", so that every round has a value to check
FileHandle.standardOutput.write(Data("ready\n".utf8))
// Never outlive the test that started it (a crashed test process cannot kill it): stop as soon as the parent is gone
// (this process is then re-parented), or after a minute.
let deadline = ContinuousClock.now + .seconds(60)
while ContinuousClock.now < deadline, getppid() == parent {
    counter.update { $0 += 1 }
}
