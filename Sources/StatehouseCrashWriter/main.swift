// A helper for the persistence crash test: writes increasing numbers to a file-backed container, with write-through,
// until it is killed. Usage: StatehouseCrashWriter DIRECTORY KEY
import Foundation
import Statehouse

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: StatehouseCrashWriter DIRECTORY KEY\n".utf8))
    exit(2)
}
let counter = StateContainer(
    0, key: arguments[2], storage: .file(directory: URL(fileURLWithPath: arguments[1])), writes: .writeThrough
)
counter.update { $0 += 1 }  // written (write-through) before "ready", so that every round has a value to check
FileHandle.standardOutput.write(Data("ready\n".utf8))
while true {
    counter.update { $0 += 1 }
}
