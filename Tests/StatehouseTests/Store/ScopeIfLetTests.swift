import Dispatch
import Foundation
import StatehouseTesting
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// An `ifLet` scope's effects run in the root store: cancelling, counting and waiting for them through the scope, or a
/// scope of it, reach the root's.
@Suite("ifLet scopes: their effects reach the store that runs them")
struct ScopeIfLetEffectsHostTests {
    /// The ifLet scope outlives its part: cancelling, counting and waiting still reach the root.
    @Test func anIfLetScopeWhosePartIsGoneStillReachesTheRootsEffects() async throws {
        let clock = ManualClock()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock))
        store.dispatch(.open)
        let sheet = try #require(store.scope(ifLet: \.sheet, action: HostAction.sheet))
        sheet.dispatch(.start)
        #expect(await sleeping(1, on: clock))
        store.dispatch(.close)
        store.dispatch(.open)
        sheet.dispatch(.start)
        #expect(await eventually { sheet.runningEffects == 1 })
        sheet.cancelEffects(id: TimerID())
        #expect(await eventually { store.runningEffects == 0 }, "the cancel did not reach the root")
        #expect(await settled(sheet))
        #expect(store.state.sheet?.ticks == 0)
    }

    /// `finishEffects` on a scope of a scope while other threads dispatch to it: it returns, and a last one after
    /// the threads have stopped sees every action applied.
    @Test func finishingAScopeOfAScopeWhileThreadsDispatchReturnsAndMissesNothing() async throws {
        let clock = ManualClock()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock))
        store.dispatch(.open)
        let sheet = try #require(store.scope(ifLet: \.sheet, action: HostAction.sheet))
        store.dispatch(.sheet(.openInner))
        let inner = try #require(sheet.scope(ifLet: \.inner, action: SheetAction.inner))
        let waiter = Task {
            for _ in 0..<50 { await inner.finishEffects() }
        }
        await onNewThreads(4) { thread in
            for round in 0..<250 {
                inner.dispatch(.tick)
                if (thread + round) % 2 == 0 { sheet.dispatch(.keepSend) }
            }
        }
        await waiter.value
        await inner.finishEffects()
        #expect(store.state.sheet?.inner?.ticks == 1000)
        #expect(inner.runningEffects == 0)
    }
}

/// An `ifLet` scope, and scopes of it, read the last non-nil part, and follow the part through `nil` and back.
@Suite("ifLet scopes keep their last part", .serialized)
struct ScopeIfLetLastPartTests {
    /// An `ifLet` scope, and scopes of it, read the last non-nil part; a scope of it follows or not.
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
        if grandFollows { #expect(spinWait { seen.load(ordering: .sequentiallyConsistent) == 20 }) }
        withExtendedLifetime(token) {}
    }

    /// A subscriber of a scope of an `ifLet` scope hears the part through `nil` and back, each value once; once it is
    /// gone the scope stops following, and reads the last value through the `ifLet` scope.
    @Test func aScopeOfAnIfLetScopeFollowsThePartThroughNilAndBack() {
        let parent = makeCountedParentStore()
        parent.dispatch(.setDetail(Counter(count: 1)))
        guard let detail = parent.scope(ifLet: \.detail, action: CountedParentAction.detail) else {
            Issue.record("no ifLet scope for a detail that is set")
            return
        }
        let count = detail.scope(state: \.count, action: { (value: Int) in CounterAction.set(value) })
        let values = Recorder<Int>()
        let token = count.subscribe(\.self) { values.append($0) }
        parent.dispatch(.setDetail(nil))
        parent.dispatch(.setDetail(Counter(count: 2)))
        parent.dispatch(.setDetail(nil))
        parent.dispatch(.setDetail(Counter(count: 2)))
        parent.dispatch(.detail(.increment))
        #expect(values.elements == [1, 2, 3])
        token.cancel()
        parent.dispatch(.setDetail(nil))
        #expect(count.upstream?.isFollowing == false)
        #expect(count.state == 3, "read through the ifLet scope, which keeps the last value")
    }
}
