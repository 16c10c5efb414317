import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs crossed update bodies on `a` and `b` until they deadlock, which ends the process one way or the other.
/// `third` is a thread that holds `b`'s lock without waiting for anything: with `plainOps`, in `modify` and `value`
/// (no update body); otherwise in short update bodies of its own.
private func crossedUpdatesUntilTheyMeet(plainOps: Bool) -> Never {
    let a = StateContainer(0, key: "crossed.a")
    let b = StateContainer(0, key: "crossed.b")
    Thread.detachNewThread { while true { a.update { $0 &+= b.value } } }
    Thread.detachNewThread {
        while true {
            if plainOps {
                b.modify(1)
                _ = b.value
            } else {
                b.update { $0 &+= 1 }
            }
        }
    }
    Thread.detachNewThread { while true { b.update { $0 &+= a.value } } }
    sleep(30)
    // No deadlock in 30 s: not what this probe is about; exit normally so the caller can tell.
    exit(0)
}

/// An `update` body that uses its own container (here: one of its tokens), and update bodies of two containers that
/// wait for each other, stop the process with Statehouse's message saying what went wrong, not with the lock's trap;
/// and nothing else is taken for that misuse: tokens of other containers, and listeners cancelling their own
/// container's tokens, are never flagged.
@Suite("Clear errors: an update body's misuse is named, and nothing else is taken for it", .serialized)
struct ClearErrorsTests {
    /// Ways a body uses a token of its own container: cancelled in the body (one thread); cancelled inside a nested
    /// `b.update`, which runs inside a's body (still a's body on this thread); released inside a's body after a
    /// nested `b.update` ended (a's mark must still be there).
    enum OwnTokenInsideTheBody: String, CaseIterable, Codable, Sendable {
        case cancelled, cancelledInANestedBody, releasedAfterANestedBody
    }

    /// Tokens of X cancelled and released inside Y's update body (also with Y nested in X's and X's in Y's): not
    /// flagged, and no call after the cancel.
    @Test func tokensCancelledInsideAnotherContainersUpdateBodyAreNotFlagged() async {
        let b1After1 = Atomic(-1), b1After2 = Atomic(-1), b1Y = Atomic(-1)
        let finished = await arFinishes {
            let x = StateContainer(0, key: "updateMark.b1.x")
            let y = StateContainer(0, key: "updateMark.b1.y")
            let calls = Atomic(0)
            let t1 = x.observe { _ in calls.add(1, ordering: .sequentiallyConsistent) }
            let t2 = Mutex<SubscriptionToken?>(x.observe { _ in calls.add(1, ordering: .sequentiallyConsistent) })
            let t3 = Mutex<SubscriptionToken?>(y.observe { _ in })
            x.modify(1)
            b1After1.store(calls.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
            y.update { v in
                v += 1
                t1.cancel()
                _ = t2.withLock { $0.take() }
            }
            x.modify(2)
            b1After2.store(calls.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
            // Nested: x's body contains y's; y's token released in x's body after y's body ended.
            let t4 = x.observe { _ in }
            x.update { _ in
                y.update { $0 += 1 }
                _ = t3.withLock { $0.take() }
            }
            y.update { _ in x.update { _ in }; t4.cancel() }
            b1Y.store(y.value, ordering: .sequentiallyConsistent)
        }
        #expect(finished)
        #expect(b1After1.load(ordering: .sequentiallyConsistent) == 2)
        #expect(b1After2.load(ordering: .sequentiallyConsistent) == 2)
        #expect(b1Y.load(ordering: .sequentiallyConsistent) == 2)
    }

    /// Listeners cancelling tokens of their own container (synchronous, after `modify` and after `update`): not
    /// flagged, since no update body runs then.
    @Test func listenersCancellingTheirOwnContainersTokensAreNotFlagged() async {
        let b2Calls = Atomic(-1), b2Others = Atomic(-1)
        let finished = await arFinishes {
            let x = StateContainer(0, key: "updateMark.b2.x")
            let others = Mutex<[SubscriptionToken]>((0..<5).map { _ in x.observe { _ in } })
            let selfToken = Mutex<SubscriptionToken?>(nil)
            let calls = Atomic(0)
            selfToken.withLock {
                $0 = x.observe { _ in
                    calls.add(1, ordering: .sequentiallyConsistent)
                    _ = others.withLock { $0.popLast() }
                    selfToken.withLock { $0?.cancel() }
                }
            }
            x.update { $0 += 1 }
            x.modify(5)
            x.update { $0 += 1 }
            b2Calls.store(calls.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
            b2Others.store(others.withLock { $0.count }, ordering: .sequentiallyConsistent)
        }
        #expect(finished)
        #expect(b2Calls.load(ordering: .sequentiallyConsistent) == 1)
        #expect(b2Others.load(ordering: .sequentiallyConsistent) == 4)
    }

    /// Many threads: updates of X, tokens of X made and cancelled inside Y's bodies and outside, concurrently: not
    /// flagged, and no call after a cancel returned.
    @Test func tokensCancelledConcurrentlyWithUpdatesOnManyThreadsAreNotFlagged() async {
        let x = StateContainer(0, key: "updateMark.b3.x")
        let y = StateContainer(0, key: "updateMark.b3.y")
        let late = Atomic(0)
        let rounds = 1500
        let finished = await arFinishes(seconds: 120) {
            let group = DispatchGroup()
            for thread in 0..<4 {
                group.enter()
                Thread.detachNewThread {
                    for i in 0..<rounds {
                        let cancelled = Atomic(false)
                        let token = x.observe { _ in
                            if cancelled.load(ordering: .sequentiallyConsistent) {
                                late.add(1, ordering: .sequentiallyConsistent)
                            }
                        }
                        let other = y.observe { _ in }
                        switch (thread + i) % 3 {
                        case 0:
                            y.update { v in
                                v += 1
                                token.cancel()
                                cancelled.store(true, ordering: .sequentiallyConsistent)
                            }
                        case 1:
                            x.update { $0 += 1 }
                            token.cancel(); cancelled.store(true, ordering: .sequentiallyConsistent)
                            y.update { $0 += 1 }
                        default:
                            // Not `x.update { other.cancel() }` (a y token): with y's bodies cancelling x tokens that
                            // is a real crossed wait, which CrossedUpdates rightly stops with its message.
                            x.update { v in v += 1 }
                            other.cancel()
                            y.update { $0 += 1 }
                            token.cancel(); cancelled.store(true, ordering: .sequentiallyConsistent)
                        }
                    }
                    group.leave()
                }
            }
            group.wait()
        }
        #expect(finished)
        #expect(late.load(ordering: .sequentiallyConsistent) == 0)
        #expect(x.value + y.value > 0)
    }

    /// Each way of using its own token inside the body stops the process with the message naming the container.
    @Test(arguments: OwnTokenInsideTheBody.allCases)
    func usingItsOwnTokenInsideTheBodyStopsWithTheMessage(_ misuse: OwnTokenInsideTheBody) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [misuse] in
            let a = StateContainer(0, key: "updateMark.own.a")
            let b = StateContainer(0, key: "updateMark.own.b")
            let token = Mutex<SubscriptionToken?>(a.observe { _ in })
            switch misuse {
            case .cancelled:
                a.update { _ in token.withLock { $0?.cancel() } }
            case .cancelledInANestedBody:
                a.update { _ in b.update { _ in token.withLock { $0?.cancel() } } }
            case .releasedAfterANestedBody:
                a.update { _ in
                    b.update { $0 += 1 }
                    _ = token.withLock { $0.take() }
                }
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("the update body of the container \"updateMark.own.a\" used that same container"))
    }

    /// Update bodies of `a` and `b` that read each other's container, crossed on two threads, while a third thread
    /// holds `b` in plain `modify`/`value` calls or in short update bodies of its own: whatever held the lock before,
    /// the circle is seen and the process stops with Statehouse's message, never the lock's "Recursive call to lock
    /// Mutex" (10 processes each). A waiter inside a body registers whoever holds the lock, and the walk reads each
    /// container's holder as it is now.
    @Test(arguments: [true, false])
    func crossedBodiesStopWithTheStatehouseMessageWhateverHeldTheLockBefore(thirdThreadPlain: Bool) async {
        var trapped = 0
        var named = 0
        var other: [String] = []
        for _ in 0..<10 {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [thirdThreadPlain] in crossedUpdatesUntilTheyMeet(plainOps: thirdThreadPlain)
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            if message.contains("Recursive call to lock Mutex") {
                trapped += 1
            } else if message.contains("wait for one another's containers") {
                named += 1
            } else {
                other.append(String(message.suffix(300)))
            }
        }
        #expect(trapped == 0, "\(trapped) of 10 processes ended in the Mutex trap, \(named) with the message; other: \(other)")
    }
}
