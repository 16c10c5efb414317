import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("Cached scopes: one per call site, parent and key path, consistent on many threads", .serialized)
struct CachedScopeTests {
    /// One call site of `scope(state:action:)` makes one scope per parent and per key path, and gives it again.
    @Test func oneCallSiteMakesOneScopePerParentAndPerKeyPath() {
        let first = makeCountedParentStore()
        let second = makeCountedParentStore()
        let scopes = [countedChildScope(of: first), countedChildScope(of: second), countedChildScope(of: first, at: \.countedChild)]
        #expect(scopes[0] !== scopes[1] && scopes[0] !== scopes[2] && scopes[1] !== scopes[2])
        #expect(countedChildScope(of: first) === scopes[0] && countedChildScope(of: second) === scopes[1])
        second.dispatch(.child(.increment))
        #expect(scopes.map(\.state.count) == [0, 1, 0])
    }

    /// Six threads, twenty rounds: one dispatches to the child and the detail; one makes the cached scope and a scope
    /// of it over and over and reads their states, which must never go backwards; four subscribe, in turn, to the
    /// cached scope, to a scope of it, to the `ifLet` scope and (queued) to the cached scope, each until it has seen
    /// five changes after its first value, then cancel. Every subscriber sees consecutive values and reads its store
    /// at the value it was called with; at the end no scope follows and the parent ends.
    @Test func scopesMadeSubscribedAndDroppedOnManyThreadsStayConsistentAndLetTheParentGo() async {
        let bad = Locked<[String]>([])
        weak var weakParent: Store<CountedParent, CountedParentAction>?
        for round in 0..<20 where bad.withLock({ $0.isEmpty }) {
            let parent = makeCountedParentStore()
            weakParent = parent
            parent.dispatch(.setDetail(Counter()))
            let checkersDone = Atomic<Int>(0)
            await onNewThreads(6) { thread in
                switch thread {
                case 0:
                    var dispatched = 0
                    while checkersDone.load(ordering: .acquiring) < 4 {
                        parent.dispatch(.child(.increment))
                        parent.dispatch(.detail(.increment))
                        dispatched += 1
                        spinWait { parent.state.child.count >= dispatched }
                    }
                case 1:
                    var last = (child: -1, grandchild: -1)
                    while checkersDone.load(ordering: .acquiring) < 4 {
                        let child = countedChildScope(of: parent)
                        let grandchild = child.scope(state: \.count, action: { (value: Int) in CounterAction.set(value) })
                        // A scope that read through its parent before it followed and its own copy after could go
                        // backwards here; it reads through its parent, following or not.
                        let now = (child: child.state.count, grandchild: grandchild.state)
                        if now.child < last.child || now.grandchild < last.grandchild {
                            bad.withLock { $0.append("round \(round): read \(now) after \(last)") }
                            return
                        }
                        last = now
                    }
                default:
                    defer { checkersDone.add(1, ordering: .releasing) }
                    for cycle in 0..<30 {
                        let values = Recorder<Int>()
                        let mismatches = SharedCounter()
                        let token: SubscriptionToken?
                        switch (thread + cycle) % 4 {
                        case 0:
                            let child = countedChildScope(of: parent)
                            token = child.subscribe(\.count) { value in
                                values.append(value)
                                if child.state.count != value { mismatches.increment() }
                            }
                        case 1:
                            let grandchild = countedChildScope(of: parent)
                                .scope(state: \.count, action: { (value: Int) in CounterAction.set(value) })
                            token = grandchild.subscribe(\.self) { value in
                                values.append(value)
                                if grandchild.state != value { mismatches.increment() }
                            }
                        case 2:
                            let detail = parent.scope(ifLet: \.detail, action: CountedParentAction.detail)
                            token = detail?.subscribe(\.count) { value in
                                values.append(value)
                                if detail?.state.count != value { mismatches.increment() }
                            }
                        default:
                            token = countedChildScope(of: parent).subscribe(
                                \.count, on: .queue(DispatchQueue(label: "cachedScope.queued"))
                            ) { values.append($0) }
                        }
                        guard let token else {
                            bad.withLock { $0.append("round \(round): no ifLet scope for a detail that is set") }
                            return
                        }
                        let followed = spinWait(timeout: .seconds(60)) {
                            guard let first = values.elements.first else { return false }
                            return values.elements.last! >= first + 5
                        }
                        token.cancel()
                        let got = values.elements
                        let consecutive = zip(got, got.dropFirst()).allSatisfy { $1 == $0 + 1 }
                        if !followed || !consecutive || mismatches.value > 0 {
                            bad.withLock {
                                $0.append("round \(round), thread \(thread), cycle \(cycle): \(got.prefix(20)), followed: \(followed), \(mismatches.value) read another state")
                            }
                            return
                        }
                    }
                }
            }
            if countedChildScope(of: parent).upstream?.isFollowing == true {
                bad.withLock { $0.append("round \(round): the scope still follows with no subscriber") }
            }
        }
        let failures = bad.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.prefix(3))")
        #expect(await eventually { weakParent == nil })
    }
}
