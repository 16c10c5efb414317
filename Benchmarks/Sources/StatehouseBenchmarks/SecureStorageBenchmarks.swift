import Foundation
import Statehouse
import StatehouseSecure

/// The encrypted storage beside the plain file storage it writes through, in the same run: what sealing and opening
/// add to a save (dominated by `fsync`) and to a load.
func addSecureStorageRows(to table: inout Table, in directory: URL) throws {
    let plain = FileStorage(directory: directory.appendingPathComponent("plain"))
    let encrypted = EncryptedStorage(directory: directory.appendingPathComponent("encrypted"), key: .random())
    let value = try JSONEncoder().encode(123_456)
    let (plainSave, encryptedSave) = try alternately(300) {
        try plain.save(value, key: "bench.secure.plain")
    } and: {
        try encrypted.save(value, key: "bench.secure.encrypted")
    }
    let (plainLoad, encryptedLoad) = try alternately(20_000) {
        _ = try plain.load(key: "bench.secure.plain")
    } and: {
        _ = try encrypted.load(key: "bench.secure.encrypted")
    }
    // A key each, and none of the persistence table's (which holds a live "bench.plain"): a live container of the
    // same key makes each new one print a duplicate-key report, timed with the row.
    let (plainStart, encryptedStart) = alternately(2_000) {
        _ = StateContainer(0, key: "bench.secure.plain", storage: plain)
    } and: {
        _ = StateContainer(0, key: "bench.secure.encrypted", storage: encrypted)
    }
    for (operation, plainTime, encryptedTime) in [
        ("save (one Int, flushed to disk)", plainSave, encryptedSave),
        ("load (one Int)", plainLoad, encryptedLoad),
        ("container load at start (one Int)", plainStart, encryptedStart),
    ] {
        table.add("file storage \(operation)", unit: "ns", cells: [Cell(value: plainTime), nil], target: "")
        table.add(
            "encrypted storage \(operation)", unit: "ns",
            cells: [Cell(value: encryptedTime, note: "(×\(format(encryptedTime / plainTime)) the file storage)"), nil],
            target: ""
        )
    }
}

/// Nanoseconds per call of `first` and of `second`, each called `count` times in alternating blocks, so that both
/// meet the same machine (the same disk flushes, the same neighbours).
private func alternately(
    _ count: Int, _ first: () throws -> Void, and second: () throws -> Void
) rethrows -> (Double, Double) {
    let blocks = 10
    var totals: (first: Duration, second: Duration) = (.zero, .zero)
    for _ in 0..<blocks {
        let start = ContinuousClock.now
        for _ in 0..<count / blocks { try first() }
        let middle = ContinuousClock.now
        for _ in 0..<count / blocks { try second() }
        totals.first += middle - start
        totals.second += ContinuousClock.now - middle
    }
    let calls = Double(count / blocks * blocks)
    return (nanoseconds(totals.first) / calls, nanoseconds(totals.second) / calls)
}
