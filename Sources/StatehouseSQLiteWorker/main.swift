// A helper for the SQLite two-process tests: another process using the same database as the test.
//
//   StatehouseSQLiteWorker DATABASE KEY increment COUNT   prints "ready", waits for a line on stdin, then runs COUNT
//                                                         `update { $0 += 1 }` on an Int container
//   StatehouseSQLiteWorker DATABASE KEY set VALUE         stores VALUE in an Int container and flushes
//   StatehouseSQLiteWorker DATABASE KEY visit COUNT       dispatches COUNT visits to a persisted store of a
//                                                         `VisitorProfile` (migrating what is stored), and flushes
import Foundation
import Statehouse
import StatehouseSQLite
import StatehouseTestSupport

let arguments = CommandLine.arguments
guard arguments.count == 5, let number = Int(arguments[4]), ["increment", "set", "visit"].contains(arguments[3]) else {
    FileHandle.standardError.write(
        Data("usage: StatehouseSQLiteWorker DATABASE KEY (increment COUNT | set VALUE | visit COUNT)\n".utf8)
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
if arguments[3] == "visit" {
    let store = Store(
        initialState: VisitorProfile(fullName: "", visits: 0), key: arguments[2], storage: storage,
        externalChanges: .ignore, reducer: visitorReducer
    )
    for _ in 0..<number { store.dispatch(.visit) }
    do {
        try store.flush()
    } catch {
        FileHandle.standardError.write(Data("\(error.message)\n".utf8))
        exit(1)
    }
    exit(0)
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
