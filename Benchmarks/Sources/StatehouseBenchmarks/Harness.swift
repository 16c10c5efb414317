import CHeapStatistics
import Foundation

/// Times `body` in five runs of about `budget` each and returns the median in nanoseconds per call.
///
/// The number of calls per run is calibrated first, so a 10 µs baseline and a 10 ns one both get enough calls
/// without the slow one taking minutes. Medians of several runs, with every baseline measured in the same process,
/// are what make the ratios meaningful on a shared, noisy machine; the absolute numbers are not.
func nanosecondsPerCall(budget: Duration = .milliseconds(100), runs: Int = 5, _ body: (Int) -> Void) -> Double {
    var calls = 16
    while true {
        let start = ContinuousClock.now
        for index in 0..<calls { body(index) }
        let elapsed = ContinuousClock.now - start
        if elapsed >= budget / 10 {
            calls = max(16, Int(Double(calls) * (budget / elapsed)))
            break
        }
        calls *= 4
    }
    var samples: [Double] = []
    for _ in 0..<runs {
        let start = ContinuousClock.now
        for index in 0..<calls { body(index) }
        samples.append(nanoseconds(ContinuousClock.now - start) / Double(calls))
    }
    return samples.sorted()[runs / 2]
}

func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
}

/// Bytes of heap in use, from the C allocator; the difference around a block is what the block kept allocated.
func heapBytesInUse() -> Int {
    Int(heap_bytes_in_use())
}

/// The heap bytes each of `count` things made by `make` keeps allocated, the median over three runs, each with a
/// fresh owner from `setup` (so that one run's growth of the owner's tables is not the next run's head start).
func bytesPerInstance<Owner, Kept>(count: Int, setup: () -> Owner, _ make: (Owner, Int) -> Kept) -> Double {
    var samples: [Double] = []
    for _ in 0..<3 {
        let owner = setup()
        var kept: [Kept] = []
        kept.reserveCapacity(count)  // before the first reading: the array itself is not counted
        let before = heapBytesInUse()
        for index in 0..<count { kept.append(make(owner, index)) }
        let after = heapBytesInUse()
        samples.append(Double(after - before) / Double(count))
        withExtendedLifetime((owner, kept)) {}
    }
    return samples.sorted()[1]
}

/// Keeps the optimizer from removing a computation whose result is otherwise unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// What observers do in every benchmark: add the value to a counter, identically for each library.
///
/// @unchecked: the benchmarks that call observers run on one thread; the counter exists so the calls do work.
final class ObserverSink: @unchecked Sendable {
    var total = 0
}
