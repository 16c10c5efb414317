import Foundation

func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
}

func milliseconds(_ duration: Duration) -> Double {
    nanoseconds(duration) / 1e6
}

/// The value at `fraction` (0.5 for the median) of sorted `samples`.
func percentile(_ samples: [Double], _ fraction: Double) -> Double {
    let sorted = samples.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

/// Waits until `condition` holds, checking every millisecond; gives up after `timeout`, saying what `waitingFor`
/// describes then.
func waitUntil(
    timeout: Duration = .seconds(120), _ waitingFor: @autoclosure () -> String, _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TimedOut(waitingFor: waitingFor()) }
        try await Task.sleep(for: .milliseconds(1))
    }
}

struct TimedOut: Error, CustomStringConvertible {
    var waitingFor: String

    var description: String {
        "Timed out waiting for \(waitingFor)"
    }
}

/// A result table: rows of a measure, its figure, and the target it meets or misses.
struct Report {
    var title: String
    var rows: [(name: String, figure: String, target: String)] = []

    func print() {
        Swift.print("## \(title)\n")
        Swift.print("| measure | figure | target |")
        Swift.print("| --- | ---: | --- |")
        for row in rows { Swift.print("| \(row.name) | \(row.figure) | \(row.target) |") }
        Swift.print("")
    }
}

func format(_ value: Double, digits: Int = 1) -> String {
    String(format: "%.\(digits)f", value)
}

func temporaryFolder() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-sync-bench-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
