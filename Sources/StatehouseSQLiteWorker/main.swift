// A helper for the SQLite two-process tests: another process using the same database as the test.
//
//   StatehouseSQLiteWorker DATABASE KEY increment COUNT   prints "ready", waits for a line on stdin, then runs COUNT
//                                                         `update { $0 += 1 }` on an Int container
//   StatehouseSQLiteWorker DATABASE KEY set VALUE         stores VALUE in an Int container and flushes
//   StatehouseSQLiteWorker DATABASE KEY visit COUNT       dispatches COUNT visits to a persisted store of a
//                                                         `VisitorProfile` (migrating what is stored), and flushes
//   StatehouseSQLiteWorker DATABASE KEY count COUNT       saves 1, 2, … COUNT under KEY, one commit each, as fast as
//                                                         it can
//   StatehouseSQLiteWorker DATABASE KEY checkpoint VALUE  saves VALUE, then checkpoints the database with
//                                                         `PRAGMA wal_checkpoint(TRUNCATE)`, which empties the -wal
//   StatehouseSQLiteWorker DATABASE KEY crash PARENT_PID  the storage conformance suite's crash writer: stores 1, 2,
//                                                         3, … (each `update` a transaction), prints "ready" after
//                                                         the first, until killed or PARENT_PID is gone
import Foundation
import GRDB
import Statehouse
import StatehouseSQLite
import StatehouseTestSupport

let arguments = CommandLine.arguments
let commands = ["increment", "set", "visit", "count", "checkpoint", "crash"]
guard arguments.count == 5, let number = Int(arguments[4]), commands.contains(arguments[3]) else {
    FileHandle.standardError.write(Data("""
        usage: StatehouseSQLiteWorker DATABASE KEY (increment COUNT | set VALUE | visit COUNT | count COUNT | \
        checkpoint VALUE | crash PARENT_PID)

        """.utf8))
    exit(2)
}
/// Ends the process with `error`'s message.
func fail(_ error: any Error) -> Never {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
let storage: SQLiteStorage
do {
    storage = try SQLiteStorage(path: arguments[1])
} catch {
    fail(error)
}
switch arguments[3] {
case "count":
    do {
        for value in 1...max(1, number) { try storage.save(Data("\(value)".utf8), key: arguments[2]) }
    } catch {
        fail(error)
    }
    exit(0)
case "checkpoint":
    do {
        try storage.save(Data("\(number)".utf8), key: arguments[2])
        let pool = try SharedDatabase.openPool(at: arguments[1])
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    } catch {
        fail(error)
    }
    exit(0)
default:
    break
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
        fail(error)
    }
    exit(0)
}
let counter = StateContainer(0, key: arguments[2], storage: storage, externalChanges: .ignore)
if arguments[3] == "crash" {
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
    fail(error)
}
