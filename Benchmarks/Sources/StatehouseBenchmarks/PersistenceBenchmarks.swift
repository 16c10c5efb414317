import Foundation
import Statehouse
import StatehouseSQLite
import Synchronization

/// File-backed containers against the article's approach: encode and write the file on every change.
func persistenceTable() throws -> Table {
    var table = Table(title: "Persistence", columns: ["Statehouse", "naive: write on every change"])
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-bench-\(UUID())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let storage = CountingStorage(FileStorage(directory: directory))

    // 100,000 changes of a coalesced container, then a flush: the cost added per change, and the writes made.
    let plain = StateContainer(0, key: "bench.plain")
    let plainTime = timeOf { for index in 0..<100_000 { plain.modify(index) } }
    let coalesced = StateContainer(0, key: "bench.coalesced", storage: storage)
    let coalescedTime = try timeOf {
        for index in 0..<100_000 { coalesced.modify(index) }
        try coalesced.flush()
    }
    let coalescedWrites = storage.saves
    let naiveChanges = 200
    let naiveTime = try timeOf {
        for index in 0..<naiveChanges {
            try FileStorage(directory: directory).save(try JSONEncoder().encode(index), key: "bench.naive")
        }
    }
    table.add(
        "modify, coalesced, added per change (writes for 100,000 changes: \(coalescedWrites))", unit: "ns",
        cells: [Cell(value: (coalescedTime - plainTime) / 100_000), Cell(value: naiveTime / Double(naiveChanges))],
        target: "≤ 1 µs, ≤ 20 writes"
    )

    let throughChanges = 200
    let through = StateContainer(0, key: "bench.through", storage: storage, writes: .writeThrough)
    let throughTime = timeOf { for index in 0..<throughChanges { through.modify(index) } }
    table.add(
        "modify, write-through, per change", unit: "ns",
        cells: [Cell(value: throughTime / Double(throughChanges)), Cell(value: naiveTime / Double(naiveChanges))],
        target: ""
    )

    // A key of its own: `coalesced` is still alive, and a second live container on its key is a mistake Statehouse
    // reports, whose report the row would time too.
    try storage.save(try JSONEncoder().encode(7), key: "bench.load")
    let loads = 2_000
    let loadTime = timeOf {
        for _ in 0..<loads { _ = StateContainer(0, key: "bench.load", storage: storage) }
    }
    table.add("load at start (one key, one Int)", unit: "ns", cells: [Cell(value: loadTime / Double(loads)), nil], target: "")

    let sqlite = try SQLiteStorage(path: directory.appendingPathComponent("state.sqlite").path)
    let payload = try JSONEncoder().encode(Array(0..<100))
    let sqliteSaves = 500
    let saveTime = try timeOf { for index in 0..<sqliteSaves { try sqlite.save(payload, key: "bench.\(index % 10)") } }
    let sqliteLoads = 20_000
    let sqliteLoadTime = try timeOf { for index in 0..<sqliteLoads { _ = try sqlite.load(key: "bench.\(index % 10)") } }
    table.add("SQLite save (400-byte value, WAL)", unit: "ns", cells: [Cell(value: saveTime / Double(sqliteSaves)), nil], target: "")
    table.add("SQLite load", unit: "ns", cells: [Cell(value: sqliteLoadTime / Double(sqliteLoads)), nil], target: "")
    // `update` on SQLite is a transaction that reads the stored value first: atomic across processes.
    let shared = StateContainer(0, key: "bench.sqlite.shared", storage: sqlite, externalChanges: .ignore)
    let sqliteUpdates = 500
    let updateTime = timeOf { for _ in 0..<sqliteUpdates { shared.update { $0 += 1 } } }
    table.add(
        "SQLite update, atomic across processes (read + write, one transaction)", unit: "ns",
        cells: [Cell(value: updateTime / Double(sqliteUpdates)), nil], target: ""
    )
    try addSecureStorageRows(to: &table, in: directory)
    return table
}

/// Nanoseconds `body` takes.
private func timeOf(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return nanoseconds(ContinuousClock.now - start)
}

/// Counts saves on the way to another storage.
private final class CountingStorage: StateStorage {
    private let base: FileStorage
    private let count = Mutex(0)

    init(_ base: FileStorage) {
        self.base = base
    }

    var saves: Int { count.withLock { $0 } }

    func load(key: String) throws -> Data? { try base.load(key: key) }
    func remove(key: String) throws { try base.remove(key: key) }
    func save(_ data: Data, key: String) throws {
        count.withLock { $0 += 1 }
        try base.save(data, key: key)
    }
}
