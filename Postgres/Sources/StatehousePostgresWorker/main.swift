import Foundation
import PostgresNIO
import Statehouse
import StatehousePostgres

// The other process of the multi-process tests: connects to the test cluster and works on one key of one table.
// `--timeout SECONDS` sets the storage's timeout (30 s by default).
//
//   StatehousePostgresWorker --port P --table T --key K increment N
//       N × `update { $0 += 1 }` on a container; prints "done" once all are stored.
//   StatehousePostgresWorker --port P --table T --key K storm N
//       the same while the test breaks connections; flushes until it succeeds and prints "flushed"; then, once a
//       line arrives on its standard input (every worker is done), waits until its container shows the stored
//       value and prints "final <value>".
//   StatehousePostgresWorker --port P --table T --key K save VALUE
//       saves the integer VALUE; prints "done".
//   StatehousePostgresWorker --port P --table T --key K replicate N
//       a ReplicatedStore of a `Tally` on the action log T (`--snapshot-every S`, 100 by default): dispatches N
//       `.increment`s, prints "dispatched" once this process applied them all; then, once a line "expect TOTAL"
//       arrives on its standard input, waits until it applied TOTAL actions and prints "final <count> <checksum>
//       <sequence>". N may be 0: a process that only catches up.

// Dies with the test process: a worker left behind would hold the test's output pipe open, and `swift test`, which
// reads it to the end, would wait forever. (Glibc's module does not export `prctl(PR_SET_PDEATHSIG)`.)
let parent = getppid()
let orphanCheck = DispatchSource.makeTimerSource(queue: .global())
orphanCheck.schedule(deadline: .now(), repeating: .seconds(1))
orphanCheck.setEventHandler { if getppid() != parent { exit(3) } }
orphanCheck.activate()

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    return arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

guard let port = option("--port").flatMap(Int.init), let table = option("--table"), let key = option("--key") else {
    FileHandle.standardError.write(Data("usage: --port P --table T --key K (increment N | storm N | save VALUE)\n".utf8))
    exit(2)
}
let command = Array(CommandLine.arguments.suffix(2))

let client = PostgresClient(configuration: .init(
    host: "127.0.0.1", port: port, username: "statehouse", password: nil, database: "postgres", tls: .disable
))
let storage = PostgresStorage(
    client: client, table: table, timeout: .seconds(option("--timeout").flatMap(Int.init) ?? 30)
)

/// Prints `line` at once (`print` would buffer it in a pipe, where the test reads each line as it comes).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Reads a line of standard input without blocking the cooperative pool.
func readInput() async -> String? {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: readLine()) }
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most two minutes.
func waitFor(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<12_000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

func work() async -> Int32 {
    switch (command.first, command.last.flatMap(Int.init)) {
    case ("increment", let count?):
        let counter = StateContainer(0, key: key, storage: storage, externalChanges: .ignore)
        for _ in 0..<count { counter.update { $0 += 1 } }
        do {
            try counter.flush()
        } catch {
            say("failed: \(error)")
            return 1
        }
        say("done")
    case ("storm", let count?):
        let counter = StateContainer(0, key: key, storage: storage, externalChanges: .poll(every: .milliseconds(20)))
        // An update that could not be stored says so here, and nowhere else.
        let reports = counter.storageError?.observe { error in
            if let error { FileHandle.standardOutput.write(Data("reported: \(error)\n".utf8)) }
        }
        defer { reports?.cancel() }
        for _ in 0..<count { counter.update { $0 += 1 } }
        guard await waitFor({ (try? counter.flush()) != nil }) else {
            say("failed: could not flush: \(String(describing: counter.storageError?.value))")
            return 1
        }
        say("flushed")
        _ = await readInput()
        let stored = { (try? storage.load(key: key)).flatMap { $0 }.flatMap { try? JSONDecoder().decode(Int.self, from: $0) } }
        guard await waitFor({ counter.value == stored() }) else {
            say("failed: the container shows \(counter.value), the table \(String(describing: stored()))")
            return 1
        }
        say("final \(counter.value)")
    case ("replicate", let count?):
        return await replicate(count)
    case ("save", let value?):
        do {
            try storage.save(Data(String(value).utf8), key: key)
        } catch {
            say("failed: \(error)")
            return 1
        }
        say("done")
    default:
        say("unknown command \(command)")
        return 2
    }
    return 0
}

/// The replicated state of `replicate`: a count, and a checksum of the order in which the actions were applied.
struct Tally: Codable, Equatable, Sendable {
    var count = 0
    var checksum: Int64 = 0
}

enum TallyAction: Codable, Sendable {
    /// `tag` names the process that dispatched it.
    case increment(tag: Int64)
}

func replicate(_ count: Int) async -> Int32 {
    let replica: ReplicatedStore<Tally, TallyAction>
    do {
        replica = try ReplicatedStore(
            client: client, log: table, initialState: Tally(),
            snapshotEvery: option("--snapshot-every").flatMap(Int.init) ?? 100, verifyDeterminism: true
        ) { state, action in
            switch action {
            case .increment(let tag):
                state.count += 1
                state.checksum = state.checksum &* 31 &+ tag
            }
        }
    } catch {
        say("failed: \(error)")
        return 1
    }
    return await withTaskGroup(of: Int32?.self) { group in
        group.addTask {
            do {
                try await replica.run()
            } catch {
                say("failed: \(error)")
                return 1
            }
            return nil
        }
        group.addTask {
            let tag = Int64(getpid())
            for _ in 0..<max(count - 1, 0) { replica.dispatch(.increment(tag: tag)) }
            do {
                if count > 0 { try await replica.send(.increment(tag: tag)) }
            } catch {
                say("failed: \(error)")
                return 1
            }
            say("dispatched")
            guard let line = await readInput(), let total = line.split(separator: " ").last.flatMap({ Int64($0) }) else {
                say("failed: expected a line \"expect TOTAL\"")
                return 1
            }
            await replica.waitUntilApplied(through: total)
            let state = replica.state
            say("final \(state.count) \(state.checksum) \(replica.appliedSequence)")
            return 0
        }
        let status = await group.next() ?? nil
        group.cancelAll()
        return status ?? 1
    }
}

let status = await withTaskGroup(of: Int32?.self) { group in
    group.addTask(executorPreference: PostgresStorage.executor) { await client.run(); return nil }
    group.addTask { await work() }
    let status = await group.next() ?? nil
    group.cancelAll()
    return status ?? 1
}
exit(status)

