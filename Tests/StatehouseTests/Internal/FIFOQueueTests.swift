import Testing
@testable import Statehouse

@Suite("FIFOQueue")
struct FIFOQueueTests {
    /// A queue that always has a round or two waiting gives back the room of what was taken: memory follows what is
    /// waiting, not what went through (a queue that compacts only once empty would keep every element ever taken,
    /// hundreds of MiB after a few million rounds).
    @Test func memoryFollowsWhatIsWaitingNotWhatWasTaken() {
        var queue = FIFOQueue<Int>()
        queue.append(0)
        var expected = 0
        for next in 1...100_000 {
            queue.append(next)
            #expect(queue.popFirst() == expected)
            expected += 1
            #expect(queue.count == 1)
        }
        #expect(queue.storageCount <= 64)
        #expect(queue.popFirst() == expected)
        #expect(queue.popFirst() == nil)
    }

    @Test func takenElementsAreReleasedAtOnce() {
        final class Tracked {}
        var queue = FIFOQueue<Tracked>()
        weak var first: Tracked?
        do {
            let element = Tracked()
            first = element
            queue.append(element)
            queue.append(Tracked())
        }
        _ = queue.popFirst()
        #expect(first == nil)
        #expect(queue.count == 1)
    }

    @Test func keepsOrderAcrossCompactions() {
        var queue = FIFOQueue<Int>()
        var taken: [Int] = []
        var next = 0
        for round in 0..<1_000 {
            for _ in 0..<(round % 7 + 1) {
                queue.append(next)
                next += 1
            }
            for _ in 0..<(round % 5) {
                if let element = queue.popFirst() { taken.append(element) }
            }
        }
        while let element = queue.popFirst() { taken.append(element) }
        #expect(taken == Array(0..<next))
    }

    @Test func replacesTheLastElementInPlace() {
        var queue = FIFOQueue<String>()
        queue.append("a")
        queue.append("b")
        queue.replaceLast(with: "c")
        #expect(queue.first == "a")
        #expect(queue.last == "c")
        #expect([queue.popFirst(), queue.popFirst(), queue.popFirst()] == ["a", "c", nil])
    }
}
