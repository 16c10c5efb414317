import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// What one subscriber heard, and whether a call started after its cancellation returned.
private final class FVRecord: Sendable {
    let kind: FVKind
    let initial: Bool
    /// The count read before subscribing: the first value can be no older.
    let before: Int
    private let heard = Locked<[Int]>([])
    private let cancelReturned = Atomic<Bool>(false)
    private let lateCalls = Atomic<Int>(0)

    init(kind: FVKind, initial: Bool, before: Int) {
        self.kind = kind
        self.initial = initial
        self.before = before
    }

    func call(_ value: Int) {
        if cancelReturned.load(ordering: .sequentiallyConsistent) {
            lateCalls.add(1, ordering: .sequentiallyConsistent)
        }
        heard.withLock { $0.append(value) }
    }

    /// Called once `cancel()` (or the token's release) has returned.
    func cancelled() {
        cancelReturned.store(true, ordering: .sequentiallyConsistent)
    }

    var values: [Int] { heard.withLock { $0 } }
    var late: Int { lateCalls.load(ordering: .sequentiallyConsistent) }

    /// What breaks the rules: a value older than the state before subscribing, a repeat or a step back, a call
    /// after cancel() returned.
    var violations: [String] {
        let values = values
        var found: [String] = []
        if let first = values.first, initial ? first < before : first <= before {
            found.append("\(kind) initial: \(initial): first value \(first), the count was \(before) before")
        }
        if zip(values, values.dropFirst()).contains(where: { $0 >= $1 }) {
            found.append("\(kind) initial: \(initial): not strictly increasing: \(values.prefix(12))…")
        }
        if late > 0 { found.append("\(kind): \(late) call(s) started after cancel() returned") }
        return found
    }
}

/// A store subscriber's first value is the state it is registered in: on an idle store at once, on a busy one once
/// the registration's turn comes (after the actions queued before it, before those queued after). It comes once, no
/// older than the state before subscribing, then every change, whoever subscribes from wherever.
@Suite("A subscription's first value: the current state, once, before every later change", .serialized)
struct SubscriptionFirstValueTests {
    /// A key-path group that emptied stays, unrefreshed, for the next subscriber of that key path; the next one, on
    /// the idle path and on the busy one, starts from the current value, hears it once, then every change.
    @Test func aKeyPathGroupThatEmptiedGivesTheNextSubscriberTheCurrentValueOnce() async {
        let (store, blocker, entered, release) = fvBusyStore()
        defer { blocker.cancel() }
        let child = store.scope(state: \.child, action: { (action: FVAction) in action })
        store.subscribe(\.count) { _ in }.cancel()
        child.subscribe(\.value) { _ in }.cancel()
        // Keep the scope following, so that its emptied group is the one reused.
        let keepChild = child.subscribe(select: { $0.value }, isDuplicate: { _, _ in true }) { _ in }
        defer { keepChild.cancel() }
        store.dispatch(.increment)
        store.dispatch(.increment)
        let idle = Recorder<Int>()
        let idleChild = Recorder<Int>()
        let idleToken = store.subscribe(\.count) { idle.append($0) }
        let idleChildToken = child.subscribe(\.value) { idleChild.append($0) }
        #expect(idle.elements == [2])
        #expect(idleChild.elements == [2])
        idleToken.cancel()
        idleChildToken.cancel()
        store.dispatch(.increment)
        // Busy: an action queued before the registration is in its first value; one queued after comes after it.
        #expect(await fvHold(store, entered: entered))
        let busy = Recorder<Int>()
        let busyChild = Recorder<Int>()
        let late = Recorder<Int>()
        // Each dispatch waits for its action, so it is made on a thread of its own; the registrations only queue.
        let before = dispatchBehindTheBusyStore(.increment, to: store)
        let tokens = await offThePool { () -> [SubscriptionToken] in
            let a = store.subscribe(\.count) { busy.append($0) }
            let b = child.subscribe(\.value) { busyChild.append($0) }
            let c = store.subscribe(\.count, initial: false) { late.append($0) }
            return [a, b, c]
        }
        let after = dispatchBehindTheBusyStore(.increment, to: store)
        release.signal()
        #expect(await waitOffThePool(for: before))
        #expect(await waitOffThePool(for: after))
        #expect(await fvDrain(store))
        #expect(busy.elements == [4, 5])
        #expect(busyChild.elements == [4, 5])
        #expect(late.elements == [5], "initial: false: no first value")
        for token in tokens { token.cancel() }
        let books = fvBookkeeping(store)
        #expect(books.emptyKeyed == books.presentEmptyKeyed, "\(books)")
    }

    /// Threads subscribing (every kind, synchronous and queued, with and without a first value), cancelling at once
    /// or by release, or keeping, while others dispatch. Every subscriber hears no value older than the state before
    /// it subscribed, each value once and in order, the last one if it kept its token, and nothing once cancel()
    /// returned; the bookkeeping adds up, and the scope stops following when its subscribers are gone.
    @Test func threadsSubscribingCancellingAndDispatchingAtOnceKeepTheFirstValueRules() async {
        let store = Store(initialState: FVState(), reducer: fvReducer)
        let child = store.scope(state: \.child, action: { (action: FVAction) in action })
        let dispatchers = 2
        // Fewer under ThreadSanitizer, which slows every access tenfold: the same windows, a third of the tries.
        let perDispatcher = isUnderThreadSanitizer ? 500 : 1_500
        let total = dispatchers * perDispatcher
        let subscribers = 3
        let rounds = 160
        let queues = (0..<subscribers).map { DispatchQueue(label: "firstValue.storm.\($0)") }
        let records = Recorder<FVRecord>()
        let kept = Recorder<(FVRecord, SubscriptionToken)>()
        await onNewThreads(dispatchers + subscribers) { thread in
            guard thread >= dispatchers else {
                for _ in 0..<perDispatcher { store.dispatch(.increment) }
                return
            }
            let index = thread - dispatchers
            for round in 0..<rounds {
                let kind = FVKind.allCases[round % 4]
                let queued = (round / 4) % 2 == 1
                let keep = round % 3 == 1
                let initial = keep || round % 5 != 0
                let record = FVRecord(kind: kind, initial: initial, before: store.state.count)
                records.append(record)
                var token: SubscriptionToken? = fvSubscribe(
                    kind, to: store, child: child, initial: initial,
                    on: queued ? .queue(queues[index]) : .synchronous
                ) { record.call($0) }
                switch round % 3 {
                case 0:
                    token?.cancel()
                    record.cancelled()
                case 1:
                    if let token { kept.append((record, token)) }
                default:
                    token = nil
                    record.cancelled()
                }
                withExtendedLifetime(token) {}
            }
        }
        // A dispatch on a busy store may return before its action is applied: the processor catches up.
        #expect(await fvWaitUntil { store.state.count == total })
        let everyKeptHeardTheLast = await fvWaitUntil {
            kept.elements.allSatisfy { $0.0.values.last == total }
        }
        #expect(everyKeptHeardTheLast)
        #expect(await fvDrain(store, queues: queues))
        let violations = records.elements.flatMap(\.violations)
        #expect(violations.isEmpty, "\(violations.count) violations: \(violations.prefix(10))")
        let keptParent = kept.elements.filter { !$0.0.kind.isScoped }.count
        let keptChild = kept.elements.count - keptParent
        var books = fvBookkeeping(store)
        #expect(books.subscribers == keptParent && books.registered == keptParent, "\(books)")
        #expect(books.emptyKeyed == books.presentEmptyKeyed, "\(books)")
        var childBooks = fvBookkeeping(child)
        #expect(childBooks.subscribers == keptChild && childBooks.registered == keptChild, "\(childBooks)")
        #expect(childBooks.emptyKeyed == childBooks.presentEmptyKeyed, "\(childBooks)")
        for (_, token) in kept.elements { token.cancel() }
        books = fvBookkeeping(store)
        childBooks = fvBookkeeping(child)
        #expect(books.subscribers == 0 && books.registered == 0, "\(books)")
        #expect(childBooks.subscribers == 0 && childBooks.registered == 0, "\(childBooks)")
        #expect(child.upstream?.isFollowing == false, "no subscriber left: the scope stopped following")
        #expect(store.followers.isEmpty)
    }

    /// Subscribers (key path, own selection; synchronous and queued) registered while the store is busy on another
    /// thread hear the state after the busy action first, once; an action queued after the registrations comes
    /// after; a subscriber with `initial: false` hears only that action's change.
    @Test func aSubscriberOfAStoreBusyOnAnotherThreadHearsTheStateAfterTheBusyActionFirstAndOnce() async {
        for delivery in [Delivery.synchronous, .queue(DispatchQueue(label: "selection.queue"))] {
            let (store, blocker, entered, release) = tallyStoreWithABlockingSubscriber()
            defer { blocker.cancel() }
            let heard = SGHeard<Int>()
            let heardOwn = SGHeard<Int>()
            let heardLate = SGHeard<Int>()
            let tokens = SGSlot<[SubscriptionToken]>([])
            let holder = Thread { store.dispatch(.hold) }
            holder.start()
            #expect(await waitOffThePool(for: entered))
            // The store is busy on `holder`: both registrations are queued, behind the held action.
            let token = await offThePool { store.subscribe(\.count, on: delivery) { heard.append($0) } }
            let own = await offThePool {
                store.subscribe(select: { $0.count }, isDuplicate: ==, on: delivery) { heardOwn.append($0) }
            }
            #expect(heard.values.isEmpty)
            #expect(heardOwn.values.isEmpty)
            // An action queued after the registrations comes after the first value.
            let dispatched = DispatchSemaphore(value: 0)
            Thread {
                store.dispatch(.increment)
                dispatched.signal()
            }.start()
            // And a subscriber queued between them, with initial: false, hears only the increment.
            let late = await offThePool {
                store.subscribe(\.count, initial: false, on: delivery) { heardLate.append($0) }
            }
            tokens.set([token, own, late])
            release.signal()
            #expect(await waitOffThePool(for: dispatched))
            #expect(await waitUntil { heard.values.last == 2 && heardOwn.values.last == 2 })
            #expect(heard.values == [1, 2])
            #expect(heardOwn.values == [1, 2])
            #expect(await waitUntil { heardLate.values.last == 2 || store.state.count == 2 })
            #expect(heardLate.values == [2] || heardLate.values == [])
            for token in tokens.take() ?? [] { token.cancel() }
        }
    }

    /// Subscribers made on threads racing four dispatching threads, which find the store busy or idle: each first
    /// value is no older than the state before subscribing, values only go forward, and each hears the last value.
    @Test func subscribersRacingBusyAndIdleStoresFromManyThreadsHearTheirFirstValueOnceAndInOrder() async {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let violations = SGHeard<String>()
        let keep = SGHeard<(Int, SGHeard<Int>)>()
        let tokens = SGHeard<SubscriptionToken>()
        // The dispatchers return once their callers' share is done; a background thread then delivers the rest to
        // up to 600 subscribers. Under ThreadSanitizer, with 1,500 actions a thread, every subscriber was still at
        // about 3,800 of 6,000 a minute later, hearing each value in turn: fewer actions there, the same windows.
        let perThread = isUnderThreadSanitizer ? 250 : 1_500
        let total = 4 * perThread
        await onNewThreads(6) { thread in
            if thread < 4 {
                for _ in 0..<perThread { store.dispatch(.increment) }
                return
            }
            for round in 0..<300 {
                let before = store.state.count
                let heard = SGHeard<Int>()
                if round.isMultiple(of: 2) {
                    tokens.append(store.subscribe(tallyKeyPaths[round % 3]) { heard.append($0) })
                } else {
                    tokens.append(store.subscribe(select: { $0.count }, isDuplicate: ==) { heard.append($0) })
                }
                keep.append((before, heard))
            }
        }
        // A hang detector, not a speed budget; checked every 50 ms, since each check copies what all the subscribers
        // heard, under the locks they append with.
        #expect(await eventually(timeout: .seconds(600), every: .milliseconds(50)) {
            keep.values.allSatisfy { $0.1.values.last == total }
        })
        for (before, heard) in keep.values {
            let values = heard.values
            if let first = values.first, first < before {
                violations.append("first value \(first) older than \(before)")
            }
            if zip(values, values.dropFirst()).contains(where: { $0 >= $1 }) {
                violations.append("not strictly increasing: \(values.prefix(20))…")
            }
            if values.last != total { violations.append("never heard the last value: \(values.suffix(3))") }
        }
        #expect(violations.values.isEmpty, "\(violations.values.prefix(10))")
        for token in tokens.values { token.cancel() }
    }

    /// Scoped subscribers added on an idle store, from a parent's listener, from a scope's listener and while the
    /// store is busy: each hears its first value once, then each change.
    @Test func scopedSubscribersAddedFromEveryPlaceHearTheirFirstValueOnceThenEachChange() async {
        let (store, blocker, entered, release) = tallyStoreWithABlockingSubscriber()
        defer { blocker.cancel() }
        let child = store.scope(state: \.child, action: { (action: SGToggle) in action })
        let idle = SGHeard<Int>()
        let fromParentListener = SGHeard<Int>()
        let fromChildListener = SGHeard<Int>()
        let whileBusy = SGHeard<Int>()
        let tokens = SGHeard<SubscriptionToken>()
        @Sendable func keep(_ token: SubscriptionToken) { tokens.append(token) }
        keep(child.subscribe(\.value) { idle.append($0) })
        keep(store.subscribe(\.count) { count in
            if count == 1 { keep(child.subscribe(\.value) { fromParentListener.append($0) }) }
        })
        keep(child.subscribe(\.value) { value in
            if value == 2 { keep(child.subscribe(\.value) { fromChildListener.append($0) }) }
        })
        child.dispatch(.increment)
        child.dispatch(.increment)
        let holder = Thread { store.dispatch(.hold) }
        holder.start()
        #expect(await waitOffThePool(for: entered))
        keep(await offThePool { child.subscribe(\.value) { whileBusy.append($0) } })
        let dispatched = DispatchSemaphore(value: 0)
        Thread {
            child.dispatch(.increment)
            dispatched.signal()
        }.start()
        release.signal()
        #expect(await waitOffThePool(for: dispatched))
        #expect(await waitUntil { whileBusy.values.last == 4 && idle.values.last == 4 })
        #expect(idle.values == [0, 1, 2, 3, 4])
        #expect(fromParentListener.values == [1, 2, 3, 4])
        #expect(fromChildListener.values == [2, 3, 4])
        #expect(whileBusy.values == [3, 4])
        for token in tokens.values { token.cancel() }
    }
}
