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

/// A scoped store's `state` reads its part through its parent (an `ifLet` scope keeps its last part): one and two
/// levels, following or not, computed parts, parts read by offset or not, while threads dispatch. A read is never
/// older than an earlier one, never torn, Observation tracking of it hears the root's changes, and a scope made while
/// its parent applies an action follows that action.
@Suite("Scoped stores read their part through their parent", .serialized)
struct ScopeReadThroughTests {
    /// Two levels, in every mix of following and not following: each read is the parent's current part.
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
        #expect(spinWait {
            (tokens.count == 0)
                || ((following == "child" || lastGrand.load(ordering: .sequentiallyConsistent) == 50)
                    && (following == "grand" || lastChild.load(ordering: .sequentiallyConsistent) == 50))
        })
        withExtendedLifetime(tokens) {}
    }

    /// Readers on several threads racing dispatches: never older than a previous read on the same thread, and never
    /// newer than a read of the parent made after it; one read is one consistent part.
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

    /// Observation tracking of a scope's read (one and two levels, following or not, through an `ifLet`) fires on a
    /// change of the root.
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
        #expect(spinWait(timeout: .seconds(20)) { fired.load(ordering: .sequentiallyConsistent) })
        withExtendedLifetime(token) {}
    }

    /// A reducer reading a scope of its own store (documented misuse: "must not read state") ends the process (the
    /// lock's "Recursive call to lock Mutex"), and does not hang.
    @Test func aReducerReadingAScopeOfItsStoreEndsTheProcessRatherThanHanging() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Thread.detachNewThread {
                sleep(20)
                FileHandle.standardError.write(Data("WATCHDOG: hung\n".utf8))
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
        #expect(!message.contains("WATCHDOG: hung"), "\(message.suffix(400))")
    }

    /// The parent's last outside reference goes while a scope and its token remain: the scope keeps working.
    @Test func aScopeOutlivingItsParentsReferencesKeepsWorking() async {
        var root: Store<ARRoot, ARAction>? = arStore()
        let grand = root!.scope(state: \.mid, action: ARAction.mid).scope(state: \.leaf, action: ARMidAction.leaf)
        let seen = Atomic(-1)
        let token = grand.subscribe(\.count) { seen.store($0, ordering: .sequentiallyConsistent) }
        root = nil
        for _ in 0..<10 { grand.dispatch(.bump) }
        #expect(grand.state.count == 10)
        #expect(spinWait { seen.load(ordering: .sequentiallyConsistent) == 10 })
        token.cancel()
        grand.dispatch(.bump)
        #expect(grand.state.count == 11)
    }

    /// A computed key path reading other fields of the state, scoped at two levels: reads the current state.
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

    /// A computed part whose getter reads a store: the other store of a pair, read on two threads (the two scopes
    /// would wait for each other's parent if parts were read under the parent's lock), or its own (a recursive lock).
    /// A part that is not loaded by offset is applied outside the parent's lock: neither deadlocks nor crashes. In a
    /// child process: a crash would take the runner with it.
    @Test(arguments: [false, true])
    func computedPartsThatReadStoresNeitherDeadlockNorCrash(readsItsOwnStore: Bool) async {
        await #expect(processExitsWith: .success) { [readsItsOwnStore] in
            Thread.detachNewThread {
                sleep(40)
                FileHandle.standardError.write(Data("WATCHDOG: hung\n".utf8))
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

    /// Key-path shapes read by offset or not, with a non-trivial (String, Array, class) part read on several threads
    /// while the parent changes it: memory safety of the offset load (under ThreadSanitizer too).
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

    /// `withObservationTracking` of each kind of scope's `state` hears of a change of the root, whether the scope
    /// follows (it has a subscriber) or not.
    @Test(arguments: [false, true])
    func observationOfEveryKindOfScopeHearsOfTheRootsChanges(withSubscribers: Bool) {
        let scopes = ReadThroughScopes()
        let tokens = withSubscribers ? scopes.subscribeAll { _, _, _ in } : []
        let readers = scopes.readers
        let changed = readers.map { _ in RunCount() }
        for (index, reader) in readers.enumerated() {
            withObservationTracking {
                _ = reader.read()
            } onChange: {
                changed[index].count()
            }
        }
        scopes.root.dispatch(.tick)
        for (index, reader) in readers.enumerated() {
            #expect(changed[index].value == 1, "\(reader.name)")
            #expect(reader.read() == 1, "\(reader.name)")
        }
        for token in tokens { token.cancel() }
    }

    /// A scope made on one thread while another applies an action to its parent: `scope(...)` adds the follower and
    /// reads the parent's state under the state lock, and the commit reads its followers under that lock too, so the
    /// new scope either starts from the state after the action or is shown it, never staying behind its parent.
    @Test func aScopeMadeWhileTheParentAppliesAnActionFollowsIt() async {
        struct Round: Sendable {
            var store: Store<SiblingPair, SiblingPairAction>?
            var child: Store<Int, SiblingPairAction>?
            var delay = 0
        }
        let slot = Locked(Round())
        let go = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        // A quarter under ThreadSanitizer, which slows every access tenfold: the same window, fewer tries.
        let rounds = isUnderThreadSanitizer ? 10_000 : 40_000
        let behind = Atomic<Int>(0)
        let played = Atomic<Int>(0)
        let firstBehind = Locked<String>("")

        @Sendable func waitFor(_ round: Int) -> Bool {
            var spins = 0
            while go.load(ordering: .acquiring) < round {
                if stop.load(ordering: .relaxed) { return false }
                spins += 1
                if spins % 64 == 0 { sched_yield() }
            }
            return true
        }

        await onNewThreads(3) { thread in
            switch thread {
            case 0:
                let deadline = ContinuousClock.now + .seconds(6)
                for round in 1...rounds {
                    let store = makePairStore()
                    slot.withLock { $0 = Round(store: store, child: nil, delay: Int.random(in: 0..<200)) }
                    go.store(round, ordering: .releasing)
                    while done.load(ordering: .acquiring) < 2 * round { sched_yield() }
                    let child = slot.withLock { $0.child }!
                    played.add(1, ordering: .relaxed)
                    if child.state != store.state.a {
                        if behind.add(1, ordering: .relaxed).newValue == 1 {
                            firstBehind.withLock { $0 = "round \(round): parent a=\(store.state.a), scope \(child.state)" }
                        }
                    }
                    if ContinuousClock.now > deadline { break }
                }
                stop.store(true, ordering: .relaxed)
            case 1:
                for round in 1...rounds {
                    guard waitFor(round) else { return }
                    let store = slot.withLock { $0.store }!
                    store.dispatch(.setBoth(1))
                    done.add(1, ordering: .releasing)
                }
            default:
                for round in 1...rounds {
                    guard waitFor(round) else { return }
                    let (store, delay) = slot.withLock { ($0.store!, $0.delay) }
                    var sink = 0
                    for i in 0..<delay { sink &+= i }
                    if sink == -1 { print(sink) }
                    let child = store.scope(state: \.a, action: { (action: SiblingPairAction) in action })
                    slot.withLock { $0.child = child }
                    done.add(1, ordering: .releasing)
                }
            }
        }
        let count = behind.load(ordering: .relaxed)
        #expect(count == 0, "\(count) of \(played.load(ordering: .relaxed)) new scopes stayed behind their parent; first: \(firstBehind.withLock { $0 })")
    }
}
