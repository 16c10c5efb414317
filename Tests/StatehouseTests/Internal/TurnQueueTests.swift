import Testing
@testable import Statehouse

/// The store's turn-taking, as a state machine driven by hand: which chain each item joins, when a caller's wait
/// ends, who is handed the turn, and when a background thread must take over.
@Suite("TurnQueue")
struct TurnQueueTests {
    static let worker: UInt = 10
    static let other: UInt = 20

    /// A queue whose claimer (thread 10) is in the middle of its first item.
    static func claimed(shareForOthers: Int = 16) -> TurnQueue<String> {
        var turns = TurnQueue<String>(shareForOthers: shareForOthers)
        turns.adoptClaimer(worker)
        return turns
    }

    static func performs(_ next: TurnQueue<String>.Next) -> String? {
        if case .perform(let work) = next { work } else { nil }
    }

    @Test func whatTheWorkQueuesJoinsTheChainOfTheItemBeingDone() {
        var turns = Self.claimed()
        let caller = WaitingCaller(blocking: 1)
        let waits1 = turns.submit("caller", from: Self.other, caller: caller)
        #expect(waits1)
        let waits2 = turns.submit("nested in the claimer's", from: Self.worker, caller: nil)
        #expect(!waits2)
        // The claimer's first item is done: its chain still has the nested item, behind the caller's.
        var (next, done) = turns.next()
        #expect(Self.performs(next) == "caller" && done == nil)
        // Work queued while the caller's item is done joins the caller's chain.
        let waits3 = turns.submit("nested in the caller's", from: Self.worker, caller: nil)
        #expect(!waits3)
        (next, done) = turns.next()
        #expect(Self.performs(next) == "nested in the claimer's" && done == nil)
        (next, done) = turns.next()
        #expect(Self.performs(next) == "nested in the caller's" && done == nil)
        (next, done) = turns.next()
        guard case .finished = next else {
            Issue.record("work left: \(next)")
            return
        }
        #expect(done === caller, "the caller's wait ends with its chain")
    }

    @Test func theClaimerLeavesAfterItsShareAndHandsTheTurnToTheLongestWaitingBlockedCaller() {
        var turns = Self.claimed(shareForOthers: 1)
        let suspended = WaitingCaller(blocking: nil)
        let first = WaitingCaller(blocking: 1)
        let second = WaitingCaller(blocking: 1)
        let waits4 = turns.submit("suspended", from: 30, caller: suspended)
        #expect(waits4)
        let waits5 = turns.submit("first", from: 40, caller: first)
        #expect(waits5)
        let waits6 = turns.submit("second", from: 50, caller: second)
        #expect(waits6)
        var (next, done) = turns.next()
        #expect(Self.performs(next) == "suspended", "one item of others' share")
        (next, done) = turns.next()
        #expect(done === suspended)
        guard case .handTurn(let handed) = next else {
            Issue.record("no turn handed: \(next)")
            return
        }
        #expect(handed === first, "the suspended caller is never handed the turn")
        // The first caller's turn: its own item, then, its chain done, one item of others'; then the turn moves on.
        let turn = turns.startTurn(on: 40)
        #expect(Self.performs(turn) == "first")
        (next, done) = turns.next()
        #expect(done == nil, "a worker's own chain ending ends no wait: it returns by itself")
        #expect(Self.performs(next) == "second")
        (next, done) = turns.next()
        #expect(done === second)
        guard case .finished = next else {
            Issue.record("work left: \(next)")
            return
        }
    }

    @Test func detachedWorkWithNobodyWaitingGoesToABackgroundThreadWhichHandsTheTurnToTheNextCaller() {
        var turns = Self.claimed(shareForOthers: 0)
        let waits7 = turns.submit("effect", from: Self.other, caller: nil)
        #expect(!waits7)
        var (next, _) = turns.next()
        guard case .handOff = next else {
            Issue.record("no hand-off: \(next)")
            return
        }
        let caller = WaitingCaller(blocking: 1)
        let waits8 = turns.submit("caller", from: Self.other, caller: caller)
        #expect(waits8)
        next = turns.startTurn(on: 60)
        guard case .handTurn(let handed) = next else {
            Issue.record("no turn handed: \(next)")
            return
        }
        #expect(handed === caller)
        let first = turns.startTurn(on: Self.other)
        #expect(Self.performs(first) == "effect", "work queued before the caller's first")
        let second = turns.next().next
        #expect(Self.performs(second) == "caller")
    }
}
