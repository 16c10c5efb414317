// Release-mode benchmarks of sync, each with what it is measured against in the same run:
//
//     swift run -c release --package-path Sync StatehouseSyncBenchmarks
//
// `--quick` shortens every measurement (a smoke run; the figures are noisier); `--only dispatch|latency|queued|
// throughput|replicated` runs one table (for a profiler).
import Foundation

let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let only = arguments.firstIndex(of: "--only").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
let tables: [(name: String, run: () async throws -> Report)] = [
    ("dispatch", { try await DispatchBenchmark.run(quick: quick) }),
    ("latency", { try await LatencyBenchmark.run(quick: quick) }),
    ("queued", { try await QueuedActionsBenchmark.run() }),
    ("throughput", { try await ServerThroughputBenchmark.run(quick: quick) }),
    ("replicated", { try await ReplicatedBenchmark.run(quick: quick) }),
]

print("Sync benchmarks (release build, \(ProcessInfo.processInfo.activeProcessorCount) cores)\n")
for table in tables where only == nil || only == table.name {
    try await table.run().print()
}
