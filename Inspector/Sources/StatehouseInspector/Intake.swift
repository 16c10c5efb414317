import Dispatch
import NIOConcurrencyHelpers
import Synchronization

/// What a store's tap hands the inspector, waiting to be encoded and diffed off the store's path: a ring of fixed
/// capacity with one producer and one consumer, so that the store's side is a few plain writes and atomic loads.
///
/// - The producer is the tap, which the store calls under its state lock: one call at a time, each seeing the
///   previous one's writes through that lock.
/// - The consumer is the inspector's worker thread, one per store.
///
/// When the worker is `capacity` events behind, new events are dropped and counted, and the next event kept carries
/// the count: a store far faster than encoding costs neither memory nor a wait. The last event dropped is kept aside
/// until another is kept, so that a burst that ends while the ring is full still ends on its last state
/// (``takeLastDropped()``). The worker is woken only when it said it would sleep, so a busy worker is never woken
/// per action.
@usableFromInline
// @unchecked because of `slots`, raw memory: a slot in [tail, head) belongs to the consumer, any other to the
// producer, and each side publishes a slot's hand-over with a release store of its index that the other side reads
// with an acquire load.
final class Intake<Element: Sendable>: @unchecked Sendable {
    @usableFromInline let capacity: Int
    @usableFromInline let slots: UnsafeMutablePointer<(element: Element, missedBefore: Int)?>
    /// The next slot the producer writes; only the producer moves it.
    @usableFromInline let head = Atomic<Int>(0)
    /// The next slot the consumer reads; only the consumer moves it.
    @usableFromInline let tail = Atomic<Int>(0)
    /// Whether events were dropped since the last one kept: the producer's fast path reads only this.
    @usableFromInline let hasDropped = Atomic<Bool>(false)
    /// The last event dropped, and how many were dropped before it; and how many in all since the last one kept.
    /// Locked: the consumer takes it when the ring is empty, while the producer may be dropping or keeping.
    @usableFromInline let dropped = NIOLockedValueBox<(last: (element: Element, missedBefore: Int)?, count: Int)>((nil, 0))
    /// Set by the consumer before it waits: the producer then wakes it.
    @usableFromInline let sleeping = Atomic<Bool>(false)
    /// What the consumer sleeps on; the producer signals it once per sleep, ``close()`` once more.
    @usableFromInline let wake = DispatchSemaphore(value: 0)
    private let closed = Atomic<Bool>(false)

    @usableFromInline
    init(capacity: Int) {
        precondition(capacity > 0, "An intake holds at least one event.")
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: nil, count: capacity)
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// The producer's side: keeps `element`, or drops it if the ring is full. Inlinable, so that it runs
    /// specialized for the store's types, in the app's module (see `Inspector.attach`).
    @inlinable
    func append(_ element: Element) {
        let next = head.load(ordering: .relaxed)
        guard next - tail.load(ordering: .acquiring) < capacity else { return drop(element) }
        var missed = 0
        if hasDropped.load(ordering: .relaxed) { missed = takeDropCount() }
        slots[next % capacity] = (element, missed)
        // Sequentially consistent, with the load of `sleeping` after it, against the consumer's store of `sleeping`
        // and load of `head`: one of the two sides sees the other's write, so no wake is lost.
        head.store(next + 1, ordering: .sequentiallyConsistent)
        if sleeping.load(ordering: .sequentiallyConsistent), sleeping.exchange(false, ordering: .relaxed) {
            wake.signal()
        }
    }

    /// Inlinable too: unspecialized, the tuple's metadata was looked up on each drop, at ten times a `dispatch`.
    @inlinable
    func drop(_ element: Element) {
        let replaced = dropped.withLockedValue { dropped in
            defer { dropped = ((element, dropped.count), dropped.count + 1) }
            return dropped.last
        }
        hasDropped.store(true, ordering: .relaxed)
        // Let go here, outside the lock: a state's last reference may run code of the app's.
        withExtendedLifetime(replaced) {}
    }

    /// The drops the event being kept follows; the last one dropped is then not needed.
    @inlinable
    func takeDropCount() -> Int {
        let (count, replaced) = dropped.withLockedValue { dropped in
            defer { dropped = (nil, 0) }
            return (dropped.count, dropped.last)
        }
        hasDropped.store(false, ordering: .relaxed)
        withExtendedLifetime(replaced) {}
        return count
    }

    /// The consumer's side, once the ring is empty: the last event dropped, if no event was kept after it, with how
    /// many were dropped before it.
    func takeLastDropped() -> (element: Element, missedBefore: Int)? {
        dropped.withLockedValue { dropped in
            // Under the lock that a producer keeping an event takes first when there were drops: an event kept after
            // this one is in the ring already (then this one is not needed), or follows it.
            guard head.load(ordering: .acquiring) == tail.load(ordering: .relaxed), let last = dropped.last else {
                return nil
            }
            dropped = (nil, 0)
            hasDropped.store(false, ordering: .relaxed)
            return last
        }
    }

    /// The consumer's side: everything waiting, each with how many events were dropped right before it.
    func takeAll() -> [(element: Element, missedBefore: Int)] {
        let first = tail.load(ordering: .relaxed)
        let end = head.load(ordering: .acquiring)
        var taken: [(element: Element, missedBefore: Int)] = []
        taken.reserveCapacity(end - first)
        for index in first..<end {
            if let slot = slots[index % capacity].take() { taken.append(slot) }
        }
        tail.store(end, ordering: .releasing)
        return taken
    }

    /// The consumer's side, once it found nothing to take: waits until the producer appends, unless something
    /// arrived meanwhile. Returns `false` once the intake is closed.
    func waitForMore() -> Bool {
        sleeping.store(true, ordering: .sequentiallyConsistent)
        if head.load(ordering: .sequentiallyConsistent) == tail.load(ordering: .relaxed), !closed.load(ordering: .acquiring) {
            wake.wait()
        }
        // Whoever woke it, nobody need wake it again; a producer that saw it asleep but has not signalled yet
        // leaves one signal, which only makes the next wait return at once.
        sleeping.store(false, ordering: .relaxed)
        return !closed.load(ordering: .acquiring)
    }

    /// Stops the consumer: ``waitForMore()`` returns `false`.
    func close() {
        closed.store(true, ordering: .releasing)
        wake.signal()
    }
}
