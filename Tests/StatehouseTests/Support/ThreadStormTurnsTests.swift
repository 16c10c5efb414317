import StatehouseTestSupport
import Synchronization
import Testing

/// The test helper that makes thread storms take turns (`duringThreadStorm`, in StatehouseTestSupport) gives one turn
/// at a time, to every waiter, and is clean under ThreadSanitizer (which reports accesses under a bare `Mutex` on
/// Linux as races).
@Suite struct ThreadStormTurnsTests {
    @Test func manyTasksTakingTurnsNeverOverlapAndAllGetOne() async {
        let counts = Counts()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<50 {
                        await duringThreadStorm {
                            if counts.inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
                                counts.overlaps.add(1, ordering: .relaxed)
                            }
                            await Task.yield()
                            counts.inside.subtract(1, ordering: .sequentiallyConsistent)
                            counts.turns.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
        }
        #expect(counts.overlaps.load(ordering: .relaxed) == 0)
        #expect(counts.turns.load(ordering: .relaxed) == 400)
    }

    /// Atomics, so that the test adds no ordering of its own between the turns.
    final class Counts: Sendable {
        let inside = Atomic(0), overlaps = Atomic(0), turns = Atomic(0)
    }

    @Test func aTurnTakenInsideATurnRunsAtOnce() async {
        let ran = await duringThreadStorm { await duringThreadStorm { true } }
        #expect(ran)
    }
}
