// An app in a process of its own, for the tests that kill it mid-push: `StatehouseSyncClientWorker SERVER OUTBOX
// COUNT` dispatches `.add("0")` … `.add("COUNT-1")` to the tracker fixture's synced store, flushing the outbox after
// each and printing "flushed N" once action N survives a crash; then waits until the store is synced, prints
// "synced" and exits 0 (1 if the sync failed).
import Foundation
import Statehouse
import StatehouseSync
import SyncFixtures

let arguments = CommandLine.arguments
guard arguments.count == 4, let server = URL(string: arguments[1]), let count = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: StatehouseSyncClientWorker SERVER OUTBOX COUNT\n".utf8))
    exit(2)
}
let synced = try SyncedStore(
    name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: server, token: Fixture.writer,
    outbox: URL(fileURLWithPath: arguments[2])
)
for index in 0..<count {
    synced.store.dispatch(.add(String(index)))
    try synced.flush()
    FileHandle.standardOutput.write(Data("flushed \(index)\n".utf8))
}
for await status in synced.syncStatus {
    switch status {
    case .synced:
        FileHandle.standardOutput.write(Data("synced\n".utf8))
        exit(0)
    case .failed(let error):
        FileHandle.standardError.write(Data("failed: \(error)\n".utf8))
        exit(1)
    default:
        continue
    }
}
