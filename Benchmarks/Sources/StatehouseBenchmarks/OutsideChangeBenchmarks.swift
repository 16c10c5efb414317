import Dispatch
import Foundation
import Statehouse
import StatehouseSQLite
import Synchronization

// `--outside`: how long a change made by another process takes to reach a listener, beside the same change made in
// this process, and beside polling (the default before watching) in the same run.
//
// The benchmark runs itself as the other process (`--writer file|sqlite PLACE`): it reads `KEY VALUE` lines on
// standard input, saves each, and answers with the monotonic clock just before and just after the save (the clock is
// the machine's, so both processes read the same one).

/// The number of changes per row.
private let changesPerRow = 200

/// CLOCK_MONOTONIC, in nanoseconds: the same clock in every process of the machine.
private func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The other process: saves what it is told, and says when the save started and ended.
func runOutsideWriter(kind: String, place: String) throws -> Never {
    let storage: any StateStorage = kind == "sqlite"
        ? try SQLiteStorage(path: place) : FileStorage(directory: URL(fileURLWithPath: place))
    while let line = readLine() {
        let parts = line.split(separator: " ")
        guard parts.count == 2 else { break }
        let started = monotonicNanoseconds()
        try storage.save(Data(parts[1].utf8), key: String(parts[0]))
        // Unbuffered, unlike `print` into a pipe: the other side waits for this line.
        FileHandle.standardOutput.write(Data("\(started) \(monotonicNanoseconds())\n".utf8))
    }
    exit(0)
}

/// When each value reached a listener.
private final class Arrivals: Sendable {
    private let times = Mutex<[Int: UInt64]>([:])
    private let signal = DispatchSemaphore(value: 0)

    func record(_ value: Int) {
        times.withLock { $0[value] = monotonicNanoseconds() }
        signal.signal()
    }

    /// When `value` arrived; `nil` if it did not within 10 seconds.
    func wait(for value: Int) -> UInt64? {
        while true {
            if let time = times.withLock({ $0[value] }) { return time }
            if signal.wait(timeout: .now() + 10) == .timedOut { return times.withLock { $0[value] } }
        }
    }
}

/// The other process, with a pipe each way.
private final class OutsideWriter {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = Data()

    init(kind: String, place: String) throws {
        process.executableURL = Bundle.main.executableURL
        process.arguments = ["--writer", kind, place]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// Has it save `value` under `key`; returns when the save started and ended, by the other process's clock.
    func save(_ value: Int, key: String) -> (started: UInt64, finished: UInt64) {
        input.fileHandleForWriting.write(Data("\(key) \(value)\n".utf8))
        while !buffered.contains(UInt8(ascii: "\n")) { buffered += output.fileHandleForReading.availableData }
        let end = buffered.firstIndex(of: UInt8(ascii: "\n"))!
        let times = String(decoding: buffered[..<end], as: UTF8.self).split(separator: " ").compactMap { UInt64($0) }
        buffered = Data(buffered[buffered.index(after: end)...])
        return (times[0], times[1])
    }

    func end() {
        input.fileHandleForWriting.closeFile()
        process.waitUntilExit()
    }
}

/// Milliseconds between `changesPerRow` changes and their arrival at a listener, and of the change's own call.
private struct Row {
    var label: String
    var latencies: [Double] = []
    var calls: [Double] = []
    var lost = 0

    /// `pauses`: the longest random pause before each change. Longer than the polling interval for a polled row,
    /// so that its changes land at every phase of a poll, not just after one.
    static func measure(
        _ label: String, arrivals: Arrivals, pauses: Double = 0.1, change: (Int) -> (started: UInt64, finished: UInt64)
    ) -> Row {
        var row = Row(label: label)
        for value in 1...changesPerRow {
            Thread.sleep(forTimeInterval: Double.random(in: 0...pauses))
            let (started, finished) = change(value)
            guard let arrived = arrivals.wait(for: value) else {
                row.lost += 1
                continue
            }
            row.latencies.append(Double(Int64(arrived) - Int64(started)) / 1e6)
            row.calls.append(Double(finished - started) / 1e6)
        }
        return row
    }

    func line(storage: String) -> String {
        let lostNote = lost > 0 ? " (\(lost) never arrived)" : ""
        return "| \(label)\(lostNote) | \(storage) | \(percentiles(latencies)) | \(percentiles(calls)) |"
    }

    private func percentiles(_ values: [Double]) -> String {
        guard !values.isEmpty else { return "— | —" }
        let sorted = values.sorted()
        let at = { (fraction: Double) in sorted[min(sorted.count - 1, Int((fraction * Double(sorted.count - 1)).rounded()))] }
        return "\(format(at(0.5))) | \(format(at(0.99)))"
    }
}

/// The rows for one storage: another process with watching and with polling, this process through another storage
/// instance, and this container's own change.
private func outsideRows(kind: String, place: String, storage: any StateStorage) throws -> [Row] {
    let writer = try OutsideWriter(kind: kind, place: place)
    defer { writer.end() }
    var rows: [Row] = []
    func follow(_ key: String, _ changes: ExternalChanges) -> (StateContainer<Int>, Arrivals, SubscriptionToken) {
        let arrivals = Arrivals()
        let container = StateContainer(0, key: "\(kind).\(key)", storage: storage, externalChanges: changes)
        return (container, arrivals, container.observe { arrivals.record($0) })
    }
    let (watched, watchedArrivals, watchedToken) = follow("watched", .watch)
    rows.append(Row.measure("another process → listener, `.watch`", arrivals: watchedArrivals) {
        writer.save($0, key: "\(kind).watched")
    })
    let (polled, polledArrivals, polledToken) = follow("polled", .poll)
    rows.append(Row.measure("another process → listener, `.poll` (250 ms)", arrivals: polledArrivals, pauses: 0.3) {
        writer.save($0, key: "\(kind).polled")
    })
    let other: any StateStorage = kind == "sqlite" ? try SQLiteStorage(path: place) : FileStorage(directory: URL(fileURLWithPath: place))
    let (local, localArrivals, localToken) = follow("local", .watch)
    rows.append(Row.measure("this process, another storage instance → listener, `.watch`", arrivals: localArrivals) { value in
        let started = monotonicNanoseconds()
        try? other.save(Data("\(value)".utf8), key: "\(kind).local")
        return (started, monotonicNanoseconds())
    })
    rows.append(Row.measure("this container's own `modify` → listener", arrivals: localArrivals) { value in
        let started = monotonicNanoseconds()
        local.modify(-value)
        local.modify(value)
        return (started, monotonicNanoseconds())
    })
    withExtendedLifetime((watched, polled, watchedToken, polledToken, localToken)) {}
    return rows
}

/// Prints the table of `--outside`.
func outsideChangeTable() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-bench-outside-\(UUID())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let databasePath = directory.appendingPathComponent("state.sqlite").path
    let file = try outsideRows(kind: "file", place: directory.path, storage: FileStorage(directory: directory))
    let sqlite = try outsideRows(kind: "sqlite", place: databasePath, storage: try SQLiteStorage(path: databasePath))
    print("\n### Changes → a listener (\(changesPerRow) changes per row, random pauses of 0–100 ms, 0–300 ms when polled)\n")
    print("| path | storage | change → listener, p50 ms | p99 ms | the change's own call, p50 ms | p99 ms |")
    print("|---|---|---:|---:|---:|---:|")
    for row in file { print(row.line(storage: "file")) }
    for row in sqlite { print(row.line(storage: "SQLite")) }
}
