import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// The store's inbox claims an idle store with one atomic and gives it back with another; work queued meanwhile
/// goes through the locked queue. The window these tests aim at: a worker giving the store back while another thread
/// queues work behind it. Lost there, the work would never run (nobody works, yet something waits).
@Suite("Inbox", .serialized)
struct InboxTests {
    /// Does `number` now or queues it, then, if this thread became the worker, everything queued until the store is
    /// idle: what `Store.dispatch` does, with hand-offs resumed on the same thread so that all work is done before
    /// the caller returns.
    private static func dispatch(_ number: Int, to inbox: borrowing Inbox<Int>, _ perform: (Int) -> Void) {
        guard inbox.claimIfIdle() || inbox.submit({ number }) != nil else { return }
        perform(number)
        if inbox.finishIfNothingQueued() { return }
        var next = inbox.next()
        while true {
            switch next {
            case .perform(let work):
                perform(work)
                next = inbox.next()
            case .handOff:
                next = inbox.resume(on: currentThreadIdentity())
            case .finished:
                return
            }
        }
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
        let queued = await offThePool { shared.inbox.submit { 7 } == nil }
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
        // Nested work (a reducer dispatching) does not count against the worker's share for other threads.
        for number in 0..<5 { #expect(inbox.submit { number } == nil) }
        #expect(!Self.holds(inbox.finishIfNothingQueued()))
        var done: [Int] = []
        while case .perform(let work) = inbox.next() { done.append(work) }
        #expect(done == [0, 1, 2, 3, 4])
        #expect(Self.holds(inbox.isIdle))
    }

    /// Threads dispatch numbered work, claiming, queueing and giving back as fast as they can. Every number must be
    /// done exactly once, by one worker at a time, in each thread's order; and once every thread has returned,
    /// nothing may wait: a number queued in the window of a give-back would be left behind.
    @Test func workQueuedWhileTheWorkerGivesBackIsNeverLeftBehind() async {
        let threads = 4
        let perThread = 20_000
        let shared = SharedInbox(shareForOthers: 16)
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        // Read and written only by the worker, which must be alone.
        let progress = Locked((done: 0, lastPerThread: [Int](repeating: -1, count: threads), outOfOrder: 0))
        await onNewThreads(threads) { thread in
            for sequence in 0..<perThread {
                Self.dispatch(thread * perThread + sequence, to: shared.inbox) { number in
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
            }
        }
        let (done, _, outOfOrder) = progress.withLock { $0 }
        #expect(done == threads * perThread, "work left behind")
        #expect(Self.holds(shared.inbox.isIdle))
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(outOfOrder == 0)
    }
}

/// One inbox that threads share (an `Inbox` is `~Copyable`: closures cannot capture it, but can capture its box).
private final class SharedInbox: Sendable {
    let inbox: Inbox<Int>

    init(shareForOthers: Int) {
        inbox = Inbox(shareForOthers: shareForOthers)
    }
}
