// A helper for the SQLite two-process tests: another process using the same database as the test.
//
//   StatehouseSQLiteWorker DATABASE KEY increment COUNT   prints "ready", waits for a line on stdin, then runs COUNT
//                                                         `update { $0 += 1 }` on an Int container
//   StatehouseSQLiteWorker DATABASE KEY set VALUE         stores VALUE in an Int container and flushes
import Foundation
import Statehouse
import StatehouseSQLite

let arguments = CommandLine.arguments
guard arguments.count == 5, let number = Int(arguments[4]), ["increment", "set"].contains(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: StatehouseSQLiteWorker DATABASE KEY (increment COUNT | set VALUE)\n".utf8))
    exit(2)
}
let storage: SQLiteStorage
do {
    storage = try SQLiteStorage(path: arguments[1])
} catch {
    FileHandle.standardError.write(Data("\(error.message)\n".utf8))
    exit(1)
}
let counter = StateContainer(0, key: arguments[2], storage: storage, externalChanges: .ignore)
if arguments[3] == "increment" {
    // Both processes start incrementing together, so that their transactions really interleave.
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    _ = readLine()
    for _ in 0..<number { counter.update { $0 += 1 } }
} else {
    counter.modify(number)
}
do {
    try counter.flush()
} catch {
    FileHandle.standardError.write(Data("\(error.message)\n".utf8))
    exit(1)
}
