import Foundation
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres

// PostgresStorage across processes: a change → the listener of a container in another process, beside a bare
// NOTIFY → LISTEN between the same two processes (the floor); and `update { $0 += 1 }` on one key from 1, 2 and 4
// processes at once, in increments per second. The other processes are this executable again, in a mode of its own:
//
//   --watch TABLE     a container on key "latency" that prints "<value> <nanoseconds>" at each change it hears
//   --listen CHANNEL  a bare LISTEN that prints "<payload> <nanoseconds>" at each notification
//   --increment TABLE N  waits for a line on its standard input, then runs N `update { $0 += 1 }` on key
//                        "contended" and prints "done"
//
// Each prints "0 <nanoseconds>" first, once it is ready.

/// A child process of this executable, whose output lines the parent reads as they come.
struct Child {
    let process = Process()
    let input = Pipe()
    var lines: AsyncStream<String>.AsyncIterator

    init(_ arguments: [String]) throws {
        process.executableURL = Bundle.main.executableURL
        process.arguments = ["--port", "\(port)"] + arguments
        let output = Pipe()
        (process.standardInput, process.standardOutput) = (input, output)
        lines = readLines(from: output.fileHandleForReading).makeAsyncIterator()
        try process.run()
    }

    /// Waits for the child's "0 …" line.
    mutating func ready() async throws {
        let first = await lines.next()
        guard first?.hasPrefix("0 ") == true else { throw BenchmarkError("a child did not start: \(first ?? "no output")") }
    }

    /// The next "<number> <nanoseconds>" line.
    mutating func nextStamp() async -> (number: Int64, nanoseconds: Int64)? {
        while let line = await lines.next() {
            let fields = line.split(separator: " ").compactMap { Int64($0) }
            if fields.count == 2 { return (fields[0], fields[1]) }
        }
        return nil
    }

    /// Closes the child's standard input (its signal to end) and waits for it.
    func finish() throws {
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// MARK: The children

func watchForLatency(table: String) async {
    let counter = StateContainer(0, key: "latency", storage: PostgresStorage(client: client, table: table))
    let token = counter.observe { value in say("\(value) \(monotonicNanoseconds())") }
    say("0 \(monotonicNanoseconds())")
    for await _ in readLines(from: FileHandle.standardInput) {}
    token.cancel()
}

func listenBare(channel: String) async throws {
    try await client.withConnection { connection in
        try await connection.listen(on: channel) { notifications in
            say("0 \(monotonicNanoseconds())")
            let ending = Task { for await _ in readLines(from: FileHandle.standardInput) {}; exit(0) }
            defer { ending.cancel() }
            for try await notification in notifications {
                say("\(notification.payload) \(monotonicNanoseconds())")
            }
        }
    }
}

func incrementOnSignal(table: String, count: Int) async throws {
    let counter = StateContainer(
        0, key: "contended", storage: PostgresStorage(client: client, table: table), externalChanges: .ignore
    )
    say("0 \(monotonicNanoseconds())")
    var lines = readLines(from: FileHandle.standardInput).makeAsyncIterator()
    _ = await lines.next()
    // Off the cooperative pool: each update blocks its thread for its transaction.
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            for _ in 0..<count { counter.update { $0 += 1 } }
            continuation.resume()
        }
    }
    try counter.flush()
    say("done")
}

// MARK: The measurements

func measureAcrossProcesses(changes: Int, increments: Int) async throws {
    let table = "benchmark_across_\(getpid())"
    let storage = PostgresStorage(client: client, table: table)
    try await storage.migrate()

    // A change → a container's listener in another process, one change at a time.
    var watcher = try Child(["--watch", table])
    try await watcher.ready()
    var fromStart: [Int64] = []
    var fromReturn: [Int64] = []
    for value in 1...(changes + 50) {
        let start = monotonicNanoseconds()
        try storage.save(Data(String(value).utf8), key: "latency")
        let saved = monotonicNanoseconds()
        while let (heard, at) = await watcher.nextStamp() {
            guard heard >= value else { continue }
            fromStart.append(at - start)
            fromReturn.append(at - saved)
            break
        }
    }
    try watcher.finish()

    // The floor: a bare NOTIFY → a bare LISTEN in another process.
    let channel = "benchmark_channel_\(getpid())"
    var listener = try Child(["--listen", channel])
    try await listener.ready()
    var bare: [Int64] = []
    for value in 1...(changes + 50) {
        let start = monotonicNanoseconds()
        try await client.query("SELECT pg_notify(\(channel), \(String(value)))")
        while let (heard, at) = await listener.nextStamp() {
            guard heard >= value else { continue }
            bare.append(at - start)
            break
        }
    }
    try listener.finish()

    print("\nA change → the listener of a container in another process, \(changes) changes one at a time (µs)")
    print("| path | p50 | p99 |")
    print("| --- | ---: | ---: |")
    for (name, samples) in [
        ("`save` called → listener called (other process)", fromStart),
        ("`save` returned → listener called (other process)", fromReturn),
        ("bare `pg_notify` → bare LISTEN (other process; floor)", bare),
    ] {
        let (p50, p99) = percentiles(Array(samples.dropFirst(50)))
        print(String(format: "| %@ | %.0f | %.0f |", name, p50, p99))
    }

    // `update { $0 += 1 }` on one key from 1, 2 and 4 processes at once.
    print("\n`update { $0 += 1 }` on one key, \(increments) per process, all processes at once")
    print("| processes | increments per second | stored at the end |")
    print("| ---: | ---: | ---: |")
    for processes in [1, 2, 4] {
        let contended = "benchmark_contended_\(getpid())_\(processes)"
        var children = try (0..<processes).map { _ in try Child(["--increment", contended, String(increments)]) }
        for index in children.indices { try await children[index].ready() }
        let start = ContinuousClock.now
        for child in children { child.input.fileHandleForWriting.write(Data("go\n".utf8)) }
        for index in children.indices {
            guard await children[index].lines.next() == "done" else { throw BenchmarkError("an incrementing child failed") }
        }
        let elapsed = start.duration(to: .now)
        for child in children { try child.finish() }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let stored = try PostgresStorage(client: client, table: contended).load(key: "contended")
            .map { String(decoding: $0, as: UTF8.self) } ?? "nothing"
        print(String(format: "| %d | %.0f | %@ |", processes, Double(processes * increments) / seconds, stored))
    }
}
