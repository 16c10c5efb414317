import Foundation
import Synchronization
import Testing
import Statehouse

/// What an `update` body may not do, and how it fails: where it is cheap to detect, with a message that names the
/// container and says what to do, instead of the lock's "Recursive call to lock Mutex", which says nothing of the
/// cause.
@Suite("Update body misuse")
struct UpdateBodyMisuseTests {
    @Test func readingItsOwnContainerStopsWithAMessageThatSaysWhatToDo() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let count = StateContainer(0, key: "misuse.read")
            count.update { $0 = count.value + 1 }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("the update body of the container \"misuse.read\" used that same container"))
    }

    @Test func changingItsOwnContainerStopsWithTheSameMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let count = StateContainer(0, key: "misuse.modify")
            count.update { _ in count.modify(1) }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("change the value through the body's inout argument"))
    }

    /// A thread cancelling a token of a container takes the container's link, then waits there for the container's
    /// lock, which an `update` body holds; the body lets go of another token of the same container, which needs the
    /// link: a circle of two threads. It must stop with the message naming the container, as any body that uses its
    /// own container does, not with Linux's futex lock's "Recursive call to lock Mutex" or a hang. Whichever thread
    /// reaches the link first, the message comes.
    @Test func aTokenReleasedInsideItsContainersUpdateStopsWithTheMessageWhileAnotherThreadCancels() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = StateContainer(0, key: "misuse.link")
            let cancelledOutside = container.observe { _ in }
            let releasedInside = Mutex<SubscriptionToken?>(container.observe { _ in })
            let bodyStarted = Atomic(false)
            Thread.detachNewThread {
                container.update { _ in
                    bodyStarted.store(true, ordering: .sequentiallyConsistent)
                    // Not a signal: it widens the window in which the other thread holds the link and waits for
                    // this lock. The message comes either way.
                    usleep(200_000)
                    _ = releasedInside.withLock { $0.take() }
                }
            }
            while !bodyStarted.load(ordering: .sequentiallyConsistent) { sched_yield() }
            cancelledOutside.cancel()
            sleep(60)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("the update body of the container \"misuse.link\" used that same container"))
    }

    @Test func otherThreadsWaitingForTheLockAreNotMistakenForMisuse() async {
        let count = StateContainer(0, key: "misuse.contended")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<20_000 {
                        count.update { $0 += 1 }
                        _ = count.value
                    }
                }
            }
        }
        #expect(count.value == 80_000)
    }

    /// `a.update { b.value }` racing `b.update { a.value }`: a circle the lock alone would end with "Recursive call to
    /// lock Mutex", which names nothing of Statehouse. The message names both containers.
    @Test func crossedUpdateBodiesStopWithAMessageNamingBothContainers() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = StateContainer(0, key: "misuse.crossed.a")
            let b = StateContainer(0, key: "misuse.crossed.b")
            let arrived = Atomic(0)
            // Both bodies start before either reads the other container: the circle always closes.
            let meet: @Sendable () -> Void = {
                arrived.add(1, ordering: .sequentiallyConsistent)
                while arrived.load(ordering: .sequentiallyConsistent) < 2 { sched_yield() }
            }
            Thread.detachNewThread { a.update { value in meet(); value += b.value } }
            Thread.detachNewThread { b.update { value in meet(); value += a.value } }
            sleep(60)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("update bodies on 2 threads wait for one another's containers"))
        #expect(message.contains("misuse.crossed.a") && message.contains("misuse.crossed.b"))
    }

    @Test func updateBodiesThatReadOtherContainersWithoutACircleAreNotStopped() async {
        let a = StateContainer(0, key: "misuse.chain.a")
        let b = StateContainer(0, key: "misuse.chain.b")
        let c = StateContainer(1, key: "misuse.chain.c")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask { for _ in 0..<5_000 { a.update { _ = b.value; $0 += 1 } } }
                group.addTask { for _ in 0..<5_000 { b.update { $0 += c.value } } }
                group.addTask { for _ in 0..<5_000 { c.update { $0 += 0 }; c.modify(1) } }
            }
        }
        #expect(a.value == 10_000)
        #expect(b.value == 10_000)
    }
}
