// A scoped store starts following its parent when it gains its first subscriber (or, for `ifLet`, when it is made).
// The window between reading the parent's state and joining its followers is what these tests hammer.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// What one checked subscriber received, and whether the store it subscribed to showed the same value meanwhile.
private final class Received: Sendable {
    let values = Recorder<Int>()
    let mismatches = SharedCounter()

    /// Whether the values are consecutive: none missed, none repeated.
    var isConsecutive: Bool {
        let values = values.elements
        return zip(values, values.dropFirst()).allSatisfy { $1 == $0 + 1 }
    }

    /// Whether the values are consecutive and end at `last`.
    func isConsecutive(endingAt last: Int) -> Bool {
        isConsecutive && values.elements.last == last
    }
}

/// Spins for a random short while, so that the next step lands anywhere in another thread's work.
private func randomDelay() {
    var sink = 0
    for index in 0..<Int.random(in: 0..<20_000) { sink &+= index }
    if sink == -1 { print(sink) }
}

/// Makes `count` threads start their work together: each arrives, then spins until all have.
private final class StartLine: Sendable {
    private let arrived = Atomic<Int>(0)
    private let count: Int

    init(_ count: Int) {
        self.count = count
    }

    func arriveAndWait() {
        arrived.add(1, ordering: .acquiringAndReleasing)
        spinWait { arrived.load(ordering: .acquiring) >= count }
    }
}

@Suite("Scoped stores under contention", .serialized)
struct StoreScopeConcurrencyTests {
    // Four threads per round: one dispatches until the others are done; one subscribes to the scope and cancels at
    // once, over and over (the scope starts and stops following); two give a scope and a scope of that scope a
    // subscriber at a random moment, wait until it has seen 20 changes after its first value, and cancel it, over and
    // over, so that most of those subscribers are the first one, starting their store following. Each must see
    // consecutive counts, reading the same value from its store while it is called.
    @Test func aFirstSubscriberStartingWhileTheParentChangesMissesAndRepeatsNothing() async {
        let rounds = isUnderThreadSanitizer ? 10 : 40
        let cycles = 50
        let bad = Locked<[String]>([])
        for round in 0..<rounds where bad.withLock({ $0.isEmpty }) {
            let parent = makeCounterStore()
            let child = parent.scope(state: \.count, action: { (value: Int) in CounterAction.set(value) })
            let grandchild = child.scope(state: \.self, action: { (value: Int) in value })
            let checkersDone = Atomic<Int>(0)
            let start = StartLine(4)
            await onNewThreads(4) { thread in
                start.arriveAndWait()
                switch thread {
                case 0:
                    // One action at a time: a dispatch that finds the store busy only queues, and a queue of
                    // thousands would keep the subscribers' registrations waiting behind it.
                    var dispatched = 0
                    while checkersDone.load(ordering: .acquiring) < 2 {
                        parent.dispatch(.increment)
                        dispatched += 1
                        spinWait { parent.state.count >= dispatched }
                    }
                case 1:
                    // Each subscriber is registered (it has its first value) before it is cancelled: the scopes start
                    // following and stop, and this thread never has more than one registration queued.
                    while checkersDone.load(ordering: .acquiring) < 2 {
                        for store in [child, grandchild] {
                            let registered = Atomic<Bool>(false)
                            let token = store.subscribe(\.self) { _ in registered.store(true, ordering: .releasing) }
                            spinWait { registered.load(ordering: .acquiring) }
                            token.cancel()
                        }
                    }
                default:
                    defer { checkersDone.add(1, ordering: .releasing) }
                    let name = thread == 2 ? "scope" : "scope of the scope"
                    for cycle in 0..<cycles {
                        randomDelay()
                        let from = Received()
                        let token: SubscriptionToken
                        if thread == 2 {
                            token = child.subscribe(\.self) { value in
                                from.values.append(value)
                                if child.state != value { from.mismatches.increment() }
                            }
                        } else {
                            token = grandchild.subscribe(\.self) { value in
                                from.values.append(value)
                                if grandchild.state != value || child.state != value { from.mismatches.increment() }
                            }
                        }
                        // A hang detector, not a speed budget: under ThreadSanitizer, beside other storms, the
                        // dispatching thread may not run for many seconds.
                        let followed = spinWait(timeout: .seconds(signalPatience)) {
                            guard let first = from.values.elements.first else { return false }
                            return from.values.elements.last! >= first + 20
                        }
                        token.cancel()
                        let values = from.values.elements
                        if !followed || !from.isConsecutive || from.mismatches.value > 0 {
                            bad.withLock {
                                $0.append("round \(round), cycle \(cycle), \(name): \(values.count) values from \(values.first ?? -1) to \(values.last ?? -1) while the parent reached \(parent.state.count), \(from.mismatches.value) read another state")
                            }
                            return  // one is enough: each may cost a wait of a minute
                        }
                    }
                }
            }
        }
        let failures = bad.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.count) subscribers missed or repeated a change; first: \(failures.prefix(3))")
    }

    // An `ifLet` scope starts following when it is made, on the caller's thread, while another thread dispatches: it
    // must end at the parent's last value, and a subscriber of it must see every change after its first value.
    @Test func anIfLetScopeMadeWhileTheParentChangesFollowsEveryChange() async {
        let rounds = 300
        let actions = 200
        let bad = Locked<[String]>([])
        for round in 0..<rounds {
            let parent = makeCountedParentStore()
            parent.dispatch(.setDetail(Counter()))
            let received = Received()
            let made = Locked<(Store<Counter, CounterAction>?, SubscriptionToken?)>((nil, nil))
            let start = StartLine(2)
            await onNewThreads(2) { thread in
                start.arriveAndWait()
                if thread == 0 {
                    for _ in 0..<actions { parent.dispatch(.detail(.increment)) }
                } else {
                    randomDelay()
                    let detail = parent.scope(ifLet: \.detail, action: CountedParentAction.detail)
                    let token = detail?.subscribe(\.count) { value in
                        received.values.append(value)
                        if detail?.state.count != value { received.mismatches.increment() }
                    }
                    made.withLock { $0 = (detail, token) }
                }
            }
            let (detail, token) = made.withLock { $0 }
            let finished = await eventually { detail?.state.count == actions && received.values.elements.last == actions }
            if !finished || !received.isConsecutive(endingAt: actions) || received.mismatches.value > 0 {
                let values = received.values.elements
                bad.withLock {
                    $0.append("round \(round): scope at \(detail?.state.count ?? -1), \(values.count) values from \(values.first ?? -1) to \(values.last ?? -1), \(received.mismatches.value) read another state")
                }
            }
            token?.cancel()
        }
        let failures = bad.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.count) ifLet scopes fell behind; first: \(failures.prefix(3))")
    }
}
