import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// The store's inbox claims an idle store with one atomic and gives it back with another; work queued meanwhile
/// goes through the locked queue. The window these tests aim at: a worker giving the store back while another thread
/// queues work behind it. Lost there, the work would never run (nobody works, yet something waits).
@Suite("Inbox", .serialized)
struct InboxTests {
    /// Does `number` now or queues it and waits, then, while this thread is the worker, everything queued until its
    /// turn ends: what `Store.dispatch` does, with hand-offs to a background thread resumed on the same thread.
    private static func dispatch(_ number: Int, to shared: SharedInbox, _ perform: (Int) -> Void) {
        var next: TurnQueue<Int>.Next
        if shared.inbox.claimIfIdle() {
            perform(number)
            if shared.inbox.finishIfNothingQueued() { return }
            next = shared.inbox.next()
        } else {
            switch shared.inbox.submit({ number }, waiting: .blocking(shared)) {
            case .performNow(let work):
                perform(work)
                if shared.inbox.finishIfNothingQueued() { return }
                next = shared.inbox.next()
            case .queued:
                return
            case .wait(let caller):
                guard let turn = shared.inbox.wait(caller) else { return }
                next = turn
            }
        }
        while true {
            switch next {
            case .perform(let work):
                perform(work)
                next = shared.inbox.next()
            case .handOff:
                next = shared.inbox.startTurn()
            case .finished, .handTurn:
                return
            }
        }
    }

    private static func isQueued(_ submission: Inbox<Int>.Submission) -> Bool {
        if case .queued = submission { true } else { false }
    }

    /// `#expect` cannot take an expression on the `~Copyable` inbox: it is evaluated here first.
    private static func holds(_ condition: Bool) -> Bool { condition }

    @Test func anIdleInboxIsClaimedAndGivenBackWithoutTheQueue() {
        let inbox = Inbox<Int>(shareForOthers: 16)
        #expect(Self.holds(inbox.isIdle))
        #expect(Self.holds(inbox.claimIfIdle()))
        #expect(!Self.holds(inbox.isIdle))
        #expect(!Self.holds(inbox.claimIfIdle()), "a second claim while the first holds")
        #expect(Self.holds(inbox.finishIfNothingQueued()))
        #expect(Self.holds(inbox.isIdle))
    }

    @Test func workQueuedBehindAClaimMakesTheGiveBackFailAndIsDoneNext() async {
        let shared = SharedInbox(shareForOthers: 16)
        #expect(Self.holds(shared.inbox.claimIfIdle()))
        // Another thread queues while this one works.
        let queued = await offThePool { Self.isQueued(shared.inbox.submit({ 7 }, waiting: .never)) }
        #expect(queued)
        #expect(!Self.holds(shared.inbox.finishIfNothingQueued()), "the give-back must see what was queued")
        guard case .perform(let work) = shared.inbox.next() else {
            Issue.record("the queued work was not handed to the worker")
            return
        }
        #expect(work == 7)
        guard case .finished = shared.inbox.next() else {
            Issue.record("nothing else was queued")
            return
        }
        #expect(Self.holds(shared.inbox.isIdle))
        #expect(Self.holds(shared.inbox.claimIfIdle()), "an inbox that finished is claimed without the queue again")
    }

    @Test func workTheWorkerQueuesItselfIsItsOwn() {
        let inbox = Inbox<Int>(shareForOthers: 1)
        #expect(Self.holds(inbox.claimIfIdle()))
        // Nested work (a reducer dispatching) is queued behind the worker's own, and nobody waits for it.
        for number in 0..<5 { #expect(Self.isQueued(inbox.submit({ number }, waiting: .blocking(Nobody())))) }
        #expect(!Self.holds(inbox.finishIfNothingQueued()))
        var done: [Int] = []
        while case .perform(let work) = inbox.next() { done.append(work) }
        #expect(done == [0, 1, 2, 3, 4])
        #expect(Self.holds(inbox.isIdle))
    }

    /// Threads dispatch numbered work, claiming, queueing, waiting and taking turns as fast as they can. Every number
    /// must be done exactly once, by one worker at a time, in each thread's order, before its dispatch returns; and
    /// once every thread has returned, nothing may wait: a number queued in the window of a give-back would be left
    /// behind.
    @Test func workQueuedWhileTheWorkerGivesBackIsNeverLeftBehind() async {
        let threads = 4
        let perThread = 20_000
        let shared = SharedInbox(shareForOthers: 16)
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let notYetDone = Atomic<Int>(0)
        // Read and written only by the worker, which must be alone.
        let progress = Locked((done: 0, lastPerThread: [Int](repeating: -1, count: threads), outOfOrder: 0))
        await onNewThreads(threads) { thread in
            for sequence in 0..<perThread {
                Self.dispatch(thread * perThread + sequence, to: shared) { number in
                    if inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
                        overlaps.add(1, ordering: .relaxed)
                    }
                    progress.withLock { progress in
                        let (owner, sequence) = number.quotientAndRemainder(dividingBy: perThread)
                        if progress.lastPerThread[owner] >= sequence { progress.outOfOrder += 1 }
                        progress.lastPerThread[owner] = sequence
                        progress.done += 1
                    }
                    inside.subtract(1, ordering: .sequentiallyConsistent)
                }
                let applied = progress.withLock { $0.lastPerThread[thread] }
                if applied != sequence { notYetDone.add(1, ordering: .relaxed) }
            }
        }
        let (done, _, outOfOrder) = progress.withLock { $0 }
        #expect(done == threads * perThread, "work left behind")
        #expect(Self.holds(shared.inbox.isIdle))
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(outOfOrder == 0)
        #expect(notYetDone.load(ordering: .relaxed) == 0, "dispatches that returned before their work was done")
    }
}

/// One inbox that threads share (an `Inbox` is `~Copyable`: closures cannot capture it, but can capture its box).
private final class SharedInbox: TurnTaking {
    let inbox: Inbox<Int>

    var workerThread: UInt { inbox.workerThread }

    init(shareForOthers: Int) {
        inbox = Inbox(shareForOthers: shareForOthers)
    }
}

/// A store nobody else waits for.
private final class Nobody: TurnTaking {
    var workerThread: UInt { 0 }
}
