import Synchronization

/// What a store's tap hands the inspector, waiting to be encoded and diffed off the store's path: a ring of fixed
/// capacity with one producer and one consumer, so that the store's side is a few plain writes and atomic loads.
///
/// - The producer is the tap, which the store calls under its state lock: one call at a time, each seeing the
///   previous one's writes through that lock.
/// - The consumer is the inspector's worker task, one per store.
///
/// When the worker is `capacity` events behind, new events are dropped and counted, and the next event kept carries
/// the count: a store far faster than encoding costs neither memory nor a wait. The worker is woken only when it
/// said it would sleep, so a busy worker is never woken per action.
// @unchecked because of `slots`, raw memory: a slot in [tail, head) belongs to the consumer, any other to the
// producer, and each side publishes a slot's hand-over with a release store of its index that the other side reads
// with an acquire load.
@usableFromInline
final class Intake<Element: Sendable>: @unchecked Sendable {
    @usableFromInline let capacity: Int
    @usableFromInline let slots: UnsafeMutablePointer<(element: Element, missedBefore: Int)?>
    /// The next slot the producer writes; only the producer moves it.
    @usableFromInline let head = Atomic<Int>(0)
    /// The next slot the consumer reads; only the consumer moves it.
    @usableFromInline let tail = Atomic<Int>(0)
    /// Events dropped since the last one kept; the producer's alone, so loaded and stored without a read-modify-write
    /// (atomic only to be shared with its next call, which may be on another thread).
    @usableFromInline let dropped = Atomic<Int>(0)
    /// Set by the consumer before it waits: the producer then wakes it.
    @usableFromInline let sleeping = Atomic<Bool>(false)
    @usableFromInline let wake: AsyncStream<Void>.Continuation
    /// Yields when the producer woke the consumer; ends when the intake is closed.
    let wakes: AsyncStream<Void>

    @usableFromInline
    init(capacity: Int) {
        precondition(capacity > 0, "An intake holds at least one event.")
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: nil, count: capacity)
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
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
        guard next - tail.load(ordering: .acquiring) < capacity else {
            dropped.store(dropped.load(ordering: .relaxed) + 1, ordering: .relaxed)
            return
        }
        let missed = dropped.load(ordering: .relaxed)
        if missed > 0 { dropped.store(0, ordering: .relaxed) }
        slots[next % capacity] = (element, missed)
        // Sequentially consistent, with the load of `sleeping` after it, against the consumer's store of `sleeping`
        // and load of `head`: one of the two sides sees the other's write, so no wake is lost.
        head.store(next + 1, ordering: .sequentiallyConsistent)
        if sleeping.load(ordering: .sequentiallyConsistent), sleeping.exchange(false, ordering: .relaxed) {
            wake.yield()
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

    /// The consumer's side, before it waits on ``wakes``: `false` if something arrived meanwhile, and it should take
    /// that instead of waiting.
    func prepareToSleep() -> Bool {
        sleeping.store(true, ordering: .sequentiallyConsistent)
        guard head.load(ordering: .sequentiallyConsistent) == tail.load(ordering: .relaxed) else {
            sleeping.store(false, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Ends ``wakes``: the worker stops.
    func close() {
        wake.finish()
    }
}
