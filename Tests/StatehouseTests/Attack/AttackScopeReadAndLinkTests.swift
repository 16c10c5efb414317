import Dispatch
import Foundation
import Observation
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

// Attacks on 1347c25 (a scoped store reads its part under its parent's lock, StateSelector.read) and 978ff7c (the
// "inside this container's update body" mark lives on the ContainerLink, checked before the link's lock).

struct ARLeaf: Equatable, Sendable {
    var count = 0
    var label = "L0"
}

struct ARMid: Equatable, Sendable {
    var leaf = ARLeaf()
    var other = 0
    /// A computed part that reads other fields of the state.
    var mirrored: ARLeaf { ARLeaf(count: leaf.count, label: "M" + leaf.label) }
}

struct ARRoot: Equatable, Sendable {
    var mid = ARMid()
    var opt: ARMid? = nil
    var total = 0
    var computedMid: ARMid { var m = mid; m.other = total; return m }
}

enum ARLeafAction: Sendable { case bump }
enum ARMidAction: Sendable { case leaf(ARLeafAction), other }
enum ARAction: Sendable {
    case bump
    case setOpt(ARMid?)
    case mid(ARMidAction)
    case optMid(ARMidAction)
}

func arReduce(_ state: inout ARRoot, _ action: ARAction) {
    switch action {
    case .bump, .mid(.leaf(.bump)), .optMid(.leaf(.bump)):
        state.total += 1
        state.mid.leaf.count = state.total
        state.mid.leaf.label = "L\(state.total)"
        if state.opt != nil {
            state.opt!.leaf.count = state.total
            state.opt!.leaf.label = "L\(state.total)"
        }
    case .setOpt(let opt):
        state.opt = opt
    case .mid(.other), .optMid(.other):
        state.mid.other += 1
    }
}

func arStore(middleware: [Middleware<ARRoot, ARAction>] = []) -> Store<ARRoot, ARAction> {
    Store(initialState: ARRoot(), reducer: { (state: inout ARRoot, action: ARAction) in arReduce(&state, action) },
          middleware: middleware)
}

/// Runs `body` on a thread of its own; `false` if it did not return within `seconds` (the thread is then left
/// behind, blocked: a deadlock is reported as a failure instead of hanging the run).
func arFinishes(seconds: Int = 30, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return await attackWait(for: done, seconds: seconds)
}

/// A value behind the library's lock, whose sections ThreadSanitizer sees (it does not see `Mutex`'s on Linux).
final class ARBox<T: Sendable>: Sendable {
    private let locked: Locked<T>
    init(_ value: T) { locked = Locked(value) }
    var value: T {
        get { locked.withLock { $0 } }
        set { locked.withLock { $0 = newValue } }
    }
}

// MARK: - Change A: scoped stores reading through their parents

@Suite("Attack: scope reads through the parent, and the container link's update mark", .serialized)
struct AttackScopeReadAndLinkTests {

    // A1: two levels, in every mix of following / not following.
    @Test(arguments: ["none", "grand", "child", "both"])
    func nestedScopesReadTheParentsCurrentPart(following: String) async {
        let root = arStore()
        let child = root.scope(state: \.mid, action: ARAction.mid)
        let grand = child.scope(state: \.leaf, action: ARMidAction.leaf)
        var tokens: [SubscriptionToken] = []
        let lastGrand = Atomic(-1)
        let lastChild = Atomic(-1)
        if following == "grand" || following == "both" {
            tokens.append(grand.subscribe(\.count) { lastGrand.store($0, ordering: .sequentiallyConsistent) })
        }
        if following == "child" || following == "both" {
            tokens.append(child.subscribe(\.leaf.count) { lastChild.store($0, ordering: .sequentiallyConsistent) })
        }
        for i in 1...50 {
            if i % 2 == 0 { root.dispatch(.bump) } else { grand.dispatch(.bump) }
            #expect(grand.state == ARLeaf(count: i, label: "L\(i)"))
            #expect(child.state.leaf.count == i)
            #expect(root.state.total == i)
        }
        #expect(attackSpin {
            (tokens.count == 0)
                || ((following == "child" || lastGrand.load(ordering: .sequentiallyConsistent) == 50)
                    && (following == "grand" || lastChild.load(ordering: .sequentiallyConsistent) == 50))
        })
        withExtendedLifetime(tokens) {}
    }

    // A2: readers on several threads racing dispatches: never older than a previous read on the same thread, and
    // never newer than a read of the parent made after it; one read is one consistent part.
    @Test(arguments: ["none", "grand", "child"])
    func readsRacingDispatchesNeverGoBackwards(following: String) async {
        let root = arStore()
        let child = root.scope(state: \.mid, action: ARAction.mid)
        let grand = child.scope(state: \.leaf, action: ARMidAction.leaf)
        let mirrored = child.scope(state: \.mirrored, action: ARMidAction.leaf)
        let token: SubscriptionToken? = switch following {
        case "grand": grand.subscribe(\.count) { _ in }
        case "child": child.subscribe(\.other) { _ in }
        default: nil
        }
        let done = Atomic(false)
        let problems = Mutex<[String]>([])
        let dispatches = 3000
        await onNewThreads(4) { thread in
            if thread == 0 {
                for i in 0..<dispatches {
                    if i % 3 == 0 { grand.dispatch(.bump) } else { root.dispatch(.bump) }
                }
                done.store(true, ordering: .sequentiallyConsistent)
                return
            }
            var last = -1
            var lastChild = -1
            var lastMirror = -1
            while !done.load(ordering: .sequentiallyConsistent) {
                let g = grand.state
                if g.label != "L\(g.count)" { problems.withLock { $0.append("torn leaf \(g)") } }
                if g.count < last { problems.withLock { $0.append("grand went back \(last) -> \(g.count)") } }
                last = g.count
                let c = child.state.leaf.count
                if c < lastChild { problems.withLock { $0.append("child went back \(lastChild) -> \(c)") } }
                if c < g.count { problems.withLock { $0.append("child \(c) older than earlier grand \(g.count)") } }
                lastChild = c
                let m = mirrored.state
                if m.label != "ML\(m.count)" { problems.withLock { $0.append("torn mirror \(m)") } }
                if m.count < lastMirror { problems.withLock { $0.append("mirror went back") } }
                lastMirror = m.count
                let p = root.state.total
                if p < m.count {
                    problems.withLock { $0.append("parent \(p) older than earlier scope read \(m.count)") }
                }
            }
        }
        #expect(problems.withLock { Array($0.prefix(5)) } == [])
        #expect(grand.state.count == dispatches)
        withExtendedLifetime(token) {}
    }

    // A3: an ifLet scope, and scopes of it, read the last non-nil part; a scope of it follows or not.
    @Test(arguments: [false, true])
    func scopesOfAnIfLetScopeReadItsLastPart(grandFollows: Bool) async throws {
        let root = arStore()
        root.dispatch(.setOpt(ARMid()))
        let opt = try #require(root.scope(ifLet: \.opt, action: ARAction.optMid))
        let grand = opt.scope(state: \.leaf, action: ARMidAction.leaf)
        let seen = Atomic(-1)
        let token = grandFollows ? grand.subscribe(\.count) { seen.store($0, ordering: .sequentiallyConsistent) } : nil
        for i in 1...20 {
            root.dispatch(.bump)
            #expect(grand.state.count == i)
            #expect(opt.state.leaf.count == i)
        }
        root.dispatch(.setOpt(nil))
        root.dispatch(.bump)  // the parent moves on; the ifLet scope keeps its last part
        #expect(opt.state.leaf.count == 20)
        #expect(grand.state.count == 20)
        #expect(grand.state.label == "L20")
        if grandFollows { #expect(attackSpin { seen.load(ordering: .sequentiallyConsistent) == 20 }) }
        withExtendedLifetime(token) {}
    }

    // A4: Observation tracking of a scope's read (one and two levels, following or not, through an ifLet) fires on a
    // change of the root.
    @Test(arguments: ["child", "grand", "grandFollowing", "ifLetGrand", "mirrored"])
    func observationTrackingOfAScopeReadFiresOnAParentChange(which: String) async throws {
        let root = arStore()
        root.dispatch(.setOpt(ARMid()))
        let child = root.scope(state: \.mid, action: ARAction.mid)
        let grand = child.scope(state: \.leaf, action: ARMidAction.leaf)
        let mirrored = child.scope(state: \.mirrored, action: ARMidAction.leaf)
        let opt = try #require(root.scope(ifLet: \.opt, action: ARAction.optMid))
        let optGrand = opt.scope(state: \.leaf, action: ARMidAction.leaf)
        let token = which == "grandFollowing" ? grand.subscribe(\.count) { _ in } : nil
        let fired = Atomic(false)
        withObservationTracking {
            switch which {
            case "child": _ = child.state
            case "grand", "grandFollowing": _ = grand.state
            case "ifLetGrand": _ = optGrand.state
            default: _ = mirrored.state
            }
        } onChange: {
            fired.store(true, ordering: .sequentiallyConsistent)
        }
        root.dispatch(.bump)
        #expect(attackSpin(timeout: .seconds(20)) { fired.load(ordering: .sequentiallyConsistent) })
        withExtendedLifetime(token) {}
    }

    // A5: reading scopes (one and two levels, ifLet) from a parent's subscriber, selector and middleware, and from a
    // scope's own subscriber: no deadlock, no crash, and the value read is at least the one delivered.
    @Test func readingScopesFromSubscribersSelectorsAndMiddlewareDoesNotDeadlock() async throws {
        let scopes = ARBox<(Store<ARMid, ARMidAction>, Store<ARLeaf, ARLeafAction>, Store<ARLeaf, ARLeafAction>)?>(nil)
        let problems = Mutex<[String]>([])
        let middleware = Middleware<ARRoot, ARAction> { context, action, next in
            if case let (child, grand, _)? = scopes.value {
                let before = context.state.total
                if grand.state.count != before || child.state.leaf.count != before {
                    problems.withLock { $0.append("middleware read \(grand.state.count) vs \(before)") }
                }
            }
            next(action)
        }
        let root = arStore(middleware: [middleware])
        root.dispatch(.setOpt(ARMid()))
        let child = root.scope(state: \.mid, action: ARAction.mid)
        let grand = child.scope(state: \.leaf, action: ARMidAction.leaf)
        let opt = try #require(root.scope(ifLet: \.opt, action: ARAction.optMid))
        let optGrand = opt.scope(state: \.leaf, action: ARMidAction.leaf)
        scopes.value = (child, grand, optGrand)
        let finished = await arFinishes {
            var tokens: [SubscriptionToken] = []
            tokens.append(root.subscribe(\.total) { total in
                if grand.state.count < total { problems.withLock { $0.append("root subscriber: grand older") } }
                if optGrand.state.count < total { problems.withLock { $0.append("root subscriber: optGrand older") } }
                _ = child.state
            })
            tokens.append(root.subscribe(select: { state -> Int in
                // Reading a scope of its own store here crashes ("Recursive call to lock Mutex"): the first value is
                // selected under the store's lock (Store.register). Same before 1347c25 (state took that lock too).
                return state.total
            }, isDuplicate: ==) { _ in })
            tokens.append(grand.subscribe(\.count) { count in
                if root.state.total < count { problems.withLock { $0.append("grand subscriber: root older") } }
                _ = optGrand.state
                _ = child.state
                if count % 10 == 0 { grand.dispatch(.bump) }  // re-entrant dispatch from a scope subscriber
            })
            tokens.append(optGrand.subscribe(\.count) { _ in _ = grand.state; _ = opt.state })
            for _ in 0..<200 { root.dispatch(.bump) }
            withExtendedLifetime(tokens) {}
        }
        #expect(finished, "deadlock")
        #expect(problems.withLock { Array($0.prefix(5)) } == [])
    }

    // A5b: a reducer reading a scope of its own store (documented misuse: "must not read state") ends the process
    // (the lock's "Recursive call to lock Mutex", as before 1347c25), and does not hang.
    @Test func aReducerReadingAScopeOfItsStoreEndsTheProcessRatherThanHanging() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Thread.detachNewThread {
                sleep(20)
                FileHandle.standardError.write(Data("ATTACK: hung\n".utf8))
                exit(3)
            }
            let holder = ARBox<Store<ARLeaf, ARLeafAction>?>(nil)
            let root = Store(initialState: ARRoot()) { (state: inout ARRoot, action: ARAction) in
                if let grand = holder.value { _ = grand.state }
                arReduce(&state, action)
            }
            holder.value = root.scope(state: \.mid, action: ARAction.mid).scope(state: \.leaf, action: ARMidAction.leaf)
            root.dispatch(.bump)
        }
        // The watchdog's exit is a failure too: only its line tells a hang from the crash.
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!message.contains("ATTACK: hung"), "\(message.suffix(400))")
    }

    // A6: the parent's last outside reference goes while a scope and its token remain.
    @Test func aScopeOutlivingItsParentsReferencesKeepsWorking() async {
        var root: Store<ARRoot, ARAction>? = arStore()
        let grand = root!.scope(state: \.mid, action: ARAction.mid).scope(state: \.leaf, action: ARMidAction.leaf)
        let seen = Atomic(-1)
        let token = grand.subscribe(\.count) { seen.store($0, ordering: .sequentiallyConsistent) }
        root = nil
        for _ in 0..<10 { grand.dispatch(.bump) }
        #expect(grand.state.count == 10)
        #expect(attackSpin { seen.load(ordering: .sequentiallyConsistent) == 10 })
        token.cancel()
        grand.dispatch(.bump)
        #expect(grand.state.count == 11)
    }

    // A7: a computed key path reading other fields of the state, scoped at two levels.
    @Test func computedKeyPathScopesReadTheCurrentState() async {
        let root = arStore()
        let computed = root.scope(state: \.computedMid, action: ARAction.mid)
        let mirrored = computed.scope(state: \.mirrored, action: ARMidAction.leaf)
        for i in 1...10 {
            root.dispatch(.bump)
            #expect(computed.state.other == i)
            #expect(mirrored.state == ARLeaf(count: i, label: "ML\(i)"))
        }
    }

    // A7b, A7c: a computed part whose getter reads a store: the other store of a pair, read on two threads (the
    // two scopes would wait for each other's parent), or its own. 1347c25 read every part under the parent's lock,
    // and both ended the process with "Recursive call to lock Mutex"; a part that is not loaded by offset is now
    // applied outside the lock, as before that commit. In a child process: a crash would take the runner with it.
    @Test(arguments: [false, true])
    func computedPartsThatReadStoresNeitherDeadlockNorCrash(readsItsOwnStore: Bool) async {
        await #expect(processExitsWith: .success) { [readsItsOwnStore] in
            Thread.detachNewThread {
                sleep(40)
                FileHandle.standardError.write(Data("ATTACK: hung\n".utf8))
                exit(3)
            }
            let peers = (ARPeerBox(), ARPeerBox())
            let a = Store(initialState: ARPeerState(n: 1, peer: peers.1)) { (s: inout ARPeerState, _: ARPeerAction) in
                s.n += 1
            }
            let b = Store(initialState: ARPeerState(n: 2, peer: peers.0)) { (s: inout ARPeerState, _: ARPeerAction) in
                s.n += 1
            }
            peers.0.store = readsItsOwnStore ? b : a
            peers.1.store = readsItsOwnStore ? a : b
            let scopeA = a.scope(state: \.peerN, action: { (x: ARPeerAction) in x })
            let scopeB = b.scope(state: \.peerN, action: { (x: ARPeerAction) in x })
            let group = DispatchGroup()
            for side in 0..<2 {
                group.enter()
                Thread.detachNewThread {
                    for _ in 0..<200_000 { _ = side == 0 ? scopeA.state : scopeB.state }
                    group.leave()
                }
            }
            group.wait()
        }
    }

    // A8: key-path shapes read by offset or not, with a non-trivial (String, Array, class) part read on several
    // threads while the parent changes it: memory safety of the offset load (under TSan too).
    @Test func nonTrivialPartsReadByOffsetUnderRacingDispatches() async {
        let store = Store(initialState: ARShapes()) { (s: inout ARShapes, n: Int) in
            s.text = String(repeating: "x", count: n % 50) + "\(n)"
            s.list = Array(0..<(n % 20))
            s.ref = ARRef(n)
            s.pair = (n, "\(n)")
            s.nested.inner.text = "\(n)"
        }
        let text = store.scope(state: \.text, action: { (n: Int) in n })
        let list = store.scope(state: \.list, action: { (n: Int) in n })
        let ref = store.scope(state: \.ref, action: { (n: Int) in n })
        let pairText = store.scope(state: \.pair.1, action: { (n: Int) in n })
        let inner = store.scope(state: \.nested.inner.text, action: { (n: Int) in n })
        let whole = store.scope(state: \.self, action: { (n: Int) in n })
        let token = list.subscribe { _ in }
        #expect(MemoryLayout<ARShapes>.offset(of: \ARShapes.text) != nil)
        let done = Atomic(false)
        let problems = Mutex<[String]>([])
        await onNewThreads(3) { thread in
            if thread == 0 {
                for n in 1...3000 { store.dispatch(n) }
                done.store(true, ordering: .sequentiallyConsistent)
                return
            }
            while !done.load(ordering: .sequentiallyConsistent) {
                let t = text.state
                let r = ref.state.n
                let l = list.state
                let p = pairText.state
                let i = inner.state
                let w = whole.state
                if !t.hasSuffix("\(Int(t.drop(while: { $0 == "x" })) ?? -1)") {
                    problems.withLock { $0.append("text \(t)") }
                }
                if l != Array(0..<l.count) { problems.withLock { $0.append("list \(l)") } }
                if Int(p) == nil || Int(i) == nil || r < 0 || w.pair.0 != Int(w.pair.1) {
                    problems.withLock { $0.append("pair/inner/ref \(p) \(i) \(r)") }
                }
            }
        }
        #expect(problems.withLock { Array($0.prefix(5)) } == [])
        #expect(text.state == String(repeating: "x", count: 0) + "3000")
        #expect(ref.state.n == 3000)
        withExtendedLifetime(token) {}
    }

    // MARK: - Change B: the update mark on the link

    // B1: tokens of X cancelled and released inside Y's update body (also with Y nested in X's and X's in Y's).
    @Test func tokensCancelledInsideAnotherContainersUpdateBodyAreNotFlagged() async {
        let b1After1 = Atomic(-1), b1After2 = Atomic(-1), b1Y = Atomic(-1)
        let finished = await arFinishes {
            let x = StateContainer(0, key: "attack16b.b1.x")
            let y = StateContainer(0, key: "attack16b.b1.y")
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

    // B2: listeners cancelling tokens of their own container (synchronous, after modify and after update).
    @Test func listenersCancellingTheirOwnContainersTokensAreNotFlagged() async {
        let b2Calls = Atomic(-1), b2Others = Atomic(-1)
        let finished = await arFinishes {
            let x = StateContainer(0, key: "attack16b.b2.x")
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

    // B3: many threads: updates of X, tokens of X made and cancelled inside Y's bodies and outside, concurrently.
    @Test func tokensCancelledConcurrentlyWithUpdatesOnManyThreadsAreNotFlagged() async {
        let x = StateContainer(0, key: "attack16b.b3.x")
        let y = StateContainer(0, key: "attack16b.b3.y")
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

    // B4: a container deallocated on one thread while its subscription leaves on another.
    @Test func aContainerEndingWhileItsSubscriptionLeaves() async {
        let finished = await arFinishes(seconds: 120) {
            for i in 0..<400 {
                let container = ARBox<StateContainer<Int>?>(StateContainer(0, key: "attack16b.b4.\(i)"))
                let token = container.value!.observe { _ in }
                let other = StateContainer(0, key: "attack16b.b4o.\(i)")
                let go = Atomic(0)
                let group = DispatchGroup()
                group.enter()
                Thread.detachNewThread {
                    go.add(1, ordering: .sequentiallyConsistent)
                    while go.load(ordering: .sequentiallyConsistent) < 2 {}
                    if i % 2 == 0 { token.cancel() } else { other.update { _ in token.cancel() } }
                    group.leave()
                }
                go.add(1, ordering: .sequentiallyConsistent)
                while go.load(ordering: .sequentiallyConsistent) < 2 {}
                container.value = nil
                group.wait()
            }
        }
        #expect(finished)
    }

    /// B5–B7: ways a body uses a token of its own container. B5: cancelled in the body (one thread). B6: cancelled
    /// inside a nested `b.update`, which runs inside a's body: still a's body on this thread. B7: released inside a's
    /// body after a nested `b.update` ended (a's mark must still be there).
    enum OwnTokenInsideTheBody: String, CaseIterable, Codable, Sendable {
        case cancelled, cancelledInANestedBody, releasedAfterANestedBody
    }

    @Test(arguments: OwnTokenInsideTheBody.allCases)
    func usingItsOwnTokenInsideTheBodyStopsWithTheMessage(_ misuse: OwnTokenInsideTheBody) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [misuse] in
            let a = StateContainer(0, key: "attack16b.own.a")
            let b = StateContainer(0, key: "attack16b.own.b")
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
        #expect(message.contains("the update body of the container \"attack16b.own.a\" used that same container"))
    }
}

// MARK: - Fixtures

/// The store a state's computed part reads: the other store of a pair, or the state's own.
final class ARPeerBox: Sendable {
    private let locked = Locked<Store<ARPeerState, ARPeerAction>?>(nil)
    var store: Store<ARPeerState, ARPeerAction>? {
        get { locked.withLock { $0 } }
        set { locked.withLock { $0 = newValue } }
    }
}

enum ARPeerAction: Sendable { case bump }

struct ARPeerState: Sendable {
    var n: Int
    let peer: ARPeerBox
    /// Reads the other store (or this one): a computed part with a lock of its own.
    var peerN: Int { peer.store?.state.n ?? -1 }
}

final class ARRef: Sendable {
    let n: Int
    init(_ n: Int) { self.n = n }
}

struct ARInner: Sendable { var text = "0" }
struct ARNested: Sendable { var inner = ARInner() }

struct ARShapes: Sendable {
    var text = "0"
    var list: [Int] = []
    var ref = ARRef(0)
    var pair: (Int, String) = (0, "0")
    var nested = ARNested()
}

extension ARShapes: Equatable {
    static func == (l: ARShapes, r: ARShapes) -> Bool {
        l.text == r.text && l.list == r.list && l.ref === r.ref && l.pair == r.pair
            && l.nested.inner.text == r.nested.inner.text
    }
}
