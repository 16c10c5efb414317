// A helper for the SQLite two-process tests: another process using the same database as the test.
//
//   StatehouseSQLiteWorker DATABASE KEY increment COUNT   prints "ready", waits for a line on stdin, then runs COUNT
//                                                         `update { $0 += 1 }` on an Int container
//   StatehouseSQLiteWorker DATABASE KEY set VALUE         stores VALUE in an Int container and flushes
//   StatehouseSQLiteWorker DATABASE KEY count PARENT_PID  the storage conformance suite's crash writer: stores 1, 2,
//                                                         3, … (each `update` a transaction), prints "ready" after
//                                                         the first, until killed or PARENT_PID is gone
import Foundation
import Statehouse
import StatehouseSQLite

let arguments = CommandLine.arguments
guard arguments.count == 5, let number = Int(arguments[4]), ["increment", "set", "count"].contains(arguments[3]) else {
    FileHandle.standardError.write(
        Data("usage: StatehouseSQLiteWorker DATABASE KEY (increment COUNT | set VALUE | count PARENT_PID)\n".utf8)
    )
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
if arguments[3] == "count" {
    counter.update { $0 += 1 }  // stored before "ready", so that every round has a value to check
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    // Never outlive the test that started it: stop once the parent is gone (this process is re-parented), or after
    // a minute.
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline, getppid() == Int32(number) {
        counter.update { $0 += 1 }
    }
    exit(0)
}
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
