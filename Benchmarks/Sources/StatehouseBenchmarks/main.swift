// Release-mode benchmarks for Statehouse with in-run baselines.
//
//     swift run -c release --package-path Benchmarks
//
// `--quick` runs each measurement for 10 ms instead of 100 ms (a smoke run; the numbers are noisier).
// `--store` runs only the store table.
// `--outside` runs only the table of changes made by another process (about two minutes).
// `--repeat PATH COUNT` does one hot path COUNT times and nothing else, for `instructions.sh` (callgrind).

import Foundation
import Observation

let budget: Duration = CommandLine.arguments.contains("--quick") ? .milliseconds(10) : .milliseconds(100)

func containerTable() -> Table {
    let contenders: [any Contender.Type] = [
        StatehouseContender.self, GCDContender.self, OpenCombineContender.self,
        NotificationCenterContender.self, ObservableContender.self, MutexFloor.self,
    ]
    let results = contenders.map { measureContainer($0, budget: budget) }
    var table = Table(title: "State containers", columns: contenders.map { $0.name })
    // DESIGN.md's performance targets.
    let targets: [ContainerRow: String] = [
        .read: "≤ 25 ns", .write0: "≤ 30 ns", .perObserver: "≤ 15 ns",
        .contendedIncrement: "exact, ≤ 200 ns", .subscribeCancel: "≤ 100 ns", .memoryPerSubscription: "≤ 96 B",
    ]
    for row in ContainerRow.allCases {
        table.add(row.title, unit: row.unit, cells: results.map { $0[row] }, target: targets[row] ?? "")
    }
    return table
}

/// What `Observable` conformance adds to a change of a tracked container or store: the registrar's `willSet` and
/// `didSet` (an owner nothing has tracked skips them; see `ObservationGate`).
func observationRegistrarCost() -> Double {
    let registrar = ObservationRegistrar()
    let subject = ObservableContender.Box()
    return nanosecondsPerCall(budget: budget) { _ in
        registrar.willSet(subject, keyPath: \.value)
        registrar.didSet(subject, keyPath: \.value)
    }
}

if let flag = CommandLine.arguments.firstIndex(of: "--repeat"), CommandLine.arguments.count == flag + 3,
    let path = HotPath(rawValue: CommandLine.arguments[flag + 1]), let count = Int(CommandLine.arguments[flag + 2])
{
    path.run(count: count)
    exit(0)
}
if let writer = CommandLine.arguments.firstIndex(of: "--writer"), CommandLine.arguments.count == writer + 3 {
    try runOutsideWriter(kind: CommandLine.arguments[writer + 1], place: CommandLine.arguments[writer + 2])
}
if CommandLine.arguments.contains("--outside") {
    try outsideChangeTable()
    exit(0)
}
let storeOnly = CommandLine.arguments.contains("--store")
if !storeOnly {
    containerTable().print()
    print("\nObservation registrar willSet + didSet, added to changes of tracked owners only: \(format(observationRegistrarCost())) ns")
}
await storeTable(budget: budget).print()
if !storeOnly {
    try persistenceTable().print()
}
