import Dispatch
import Foundation
import StatehouseTesting
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

/// Marks a writer with the round of the stress test its container belongs to.
// @unchecked Sendable is safe: the only property is a `let` key that is never mutated; Dispatch uses a
// `DispatchSpecificKey` only for its identity, from any thread, but does not mark it `Sendable`.
private final class RoundTag: @unchecked Sendable {
    let key = DispatchSpecificKey<Int>()
}

/// Owners made, followed and let go from many threads while another "process" writes their key and notifies without
/// pause: each let-go stores its pending change, frees the key, and leaves the next container of the key no
/// duplicate.
@Suite("Owners let go while checks run, under contention", .serialized)
struct OwnerLetGoUnderContentionTests {
    /// Threads take turns making, following and letting go containers of one key while another "process" writes it
    /// and notifies without pause. In most rounds the container has a change pending when it is let go (so no
    /// outside value is handed to it, and nothing may hold it but its round and, for one call, its writer); in the
    /// others it waits until it took an outside value. After each let-go: the key frees, a pending change is
    /// stored, a container that changed nothing wrote nothing, no check was reading the storage while holding a
    /// container already let go, and the next container of the key is no duplicate.
    @Test func manyThreadsMakeFollowAndLetGoContainersOfOneKeyWhileAnotherProcessWritesIt() async throws {
        let key = "ownerDuringCheck.storm.\(UUID().uuidString)"
        let tag = RoundTag()
        /// Each round's container, whether its thread let it go, and whether it had a change pending.
        let rounds = Locked<[Int: (container: SharedWeak<StateContainer<Int>>, letGo: Bool, pending: Bool)]>([:])
        let heldAcrossARead = Recorder<Int>()
        let storage = CheckedStorage {
            guard let round = DispatchQueue.getSpecific(key: tag.key) else { return }
            // A window, not a wait: a check that holds its owner across the read still holds it here.
            for _ in 0..<8 { sched_yield() }
            // Read before the weak reference: once the round's thread let its container go, only another holder
            // (here: a check holding it across the read) keeps it alive.
            guard let entry = rounds.withLock({ $0[round] }), entry.letGo, entry.pending else { return }
            if entry.container.object != nil { heldAcrossARead.append(round) }
        }
        let roundCount = 150
        let threads = 3
        /// The outside process's writes happen under this lock, the last value in it.
        let outside = Locked<Int>(0)
        let stop = SharedFlag()
        let outsideDone = DispatchSemaphore(value: 0)
        Thread {
            var write = 0
            while !stop.isSet {
                write += 1
                outside.withLock { last in
                    last = 1_000_000 + write
                    try? storage.base.save(Data("\(last)".utf8), key: key)
                }
                storage.notify()
                for _ in 0..<(write % 16) { sched_yield() }
            }
            outsideDone.signal()
        }.start()

        let baton = DispatchSemaphore(value: 1)
        let next = SharedCounter()
        let duplicates = SharedCounter()
        let neverFreed = Recorder<Int>()
        let lost = Recorder<String>()
        let neverTook = Recorder<Int>()
        /// Let-goes after which the key was still taken, in rounds with a change pending and in the others.
        let lateFrees = (pending: SharedCounter(), taking: SharedCounter())
        await onNewThreads(threads) { _ in
            while true {
                guard baton.wait(timeout: .now() + .seconds(signalPatience * 2)) == .success else {
                    neverFreed.append(-1)
                    return
                }
                defer { baton.signal() }
                let round = next.increment() - 1
                guard round < roundCount else { return }
                let pending = round % 3 != 2
                let local = -(round + 1)
                let clock = ManualClock()
                var container: StateContainer<Int>?
                // No outside write between the load and the local change: in a pending round the container never
                // has an outside value to take.
                outside.withLock { _ in
                    let reports = duplicateKeyReports(of: key) { container = followedContainer(key, on: storage, clock: clock) }
                    for _ in 0..<reports { duplicates.increment() }
                    if pending { container?.modify(local) }
                }
                // No strong reference but `container`, which the round lets go.
                guard let persistence = container?.persistence as? StatePersistence<Int> else {
                    lost.append("round \(round): no persisted container")
                    return
                }
                persistence.writer.setSpecific(key: tag.key, value: round)
                rounds.withLock { $0[round] = (SharedWeak(container), false, pending) }
                if !pending,
                    !spinWait(timeout: .seconds(signalPatience), until: { (container?.value ?? 0) >= 1_000_000 })
                {
                    neverTook.append(round)
                }
                for _ in 0..<(round * 7 % 40) { sched_yield() }
                let letGo = {
                    container = nil
                    rounds.withLock { $0[round]?.letGo = true }
                    if KeyRegistry.shared.isLive(key) { (pending ? lateFrees.pending : lateFrees.taking).increment() }
                    if !spinWait(timeout: .seconds(signalPatience), until: { !KeyRegistry.shared.isLive(key) }) {
                        neverFreed.append(round)
                    }
                }
                if pending {
                    // No outside write from the let-go to the look at the storage: it must hold the local change.
                    outside.withLock { _ in
                        letGo()
                        let found = storedValue(storage, key)
                        if found != local { lost.append("round \(round): stored \(String(describing: found)), not \(local)") }
                    }
                } else {
                    letGo()
                    // Changed nothing: wrote nothing (only the outside process's values, from 1,000,001).
                    let found = storedValue(storage, key)
                    if (found ?? 0) < 1_000_000 {
                        lost.append("round \(round): stored \(String(describing: found)) after taking outside values")
                    }
                }
                clock.advance(by: .seconds(7200))  // its coalesced write's timer finds nothing; nothing stays asleep
            }
        }
        stop.set()
        #expect(await waitOffThePool(for: outsideDone))
        #expect(next.value >= roundCount, "a round did not finish")
        #expect(heldAcrossARead.elements.isEmpty, "checks held containers let go across reads in rounds \(heldAcrossARead.elements)")
        #expect(lost.elements.isEmpty, "\(lost.elements)")
        #expect(neverFreed.elements.isEmpty, "keys never freed in rounds \(neverFreed.elements)")
        #expect(neverTook.elements.isEmpty, "no outside value taken in rounds \(neverTook.elements)")
        #expect(duplicates.value == 0)
        if ProcessInfo.processInfo.environment["STATEHOUSE_OWNER_DURING_CHECK_VERBOSE"] != nil {
            print("""
                Owners let go during checks: the key still taken after \(lateFrees.pending.value) let-goes with a \
                change pending, \(lateFrees.taking.value) others, of \(roundCount)
                """)
        }
    }

    /// A persisted container, following its storage's notifications while another thread notifies without pause,
    /// changed then let go on this thread: its change is stored once the let-go returns, its key is free, and a new
    /// container of the key made right after is no duplicate (the count is read through the link, so no check
    /// holds the container). A count reader that held the container would fail here.
    @Test func persistedContainerLetGoWhileChecksReadItsCount() async {
        let outcome = await offThePool { () -> [String] in
            var problems: [String] = []
            let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
            let stop = Atomic<Bool>(false)
            let notifier = onAThreadOfItsOwn {
                while !stop.load(ordering: .relaxed) { storage.notify() }
            }
            for round in 0..<200 {
                let key = "cancelstate.letgo.\(round).\(UUID().uuidString)"
                let reported = Recorder<StatehouseDiagnostic>()
                StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) {
                    var container: StateContainer<Int>? = StateContainer(
                        0, key: key, storage: storage, codec: .json, writes: .coalesced,
                        externalChanges: .watch(safetyNet: .milliseconds(1))
                    )
                    container!.modify(round + 1)
                    container = nil
                    let stored = (try? storage.base.load(key: key)).flatMap { String(data: $0, encoding: .utf8) }
                    if stored != "\(round + 1)" { problems.append("round \(round): stored \(stored ?? "nil")") }
                    if KeyRegistry.shared.isLive(key) { problems.append("round \(round): key still live") }
                    let again = StateContainer(0, key: key)
                    withExtendedLifetime(again) {}
                }
                let dups = reported.elements.filter { $0.kind == .duplicateKey && $0.key == key }.count
                if dups > 0 { problems.append("round \(round): \(dups) duplicate-key reports") }
            }
            stop.store(true, ordering: .relaxed)
            _ = notifier.wait(timeout: .now() + .seconds(signalPatience))
            return problems
        }
        #expect(outcome.isEmpty, "\(outcome.prefix(10))")
    }
}
