import Dispatch
import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

private struct Tally: Codable, Equatable, Sendable {
    var count = 0
}

/// A persisted root store that only its scoped store keeps: actions dispatched through the scope from many threads
/// are all applied (read your own write), and once the scope is let go the root ends and writes every one of them
/// (durability at the end of the owner), whichever thread lets it go: the last dispatching thread, or a background
/// thread the root handed its work to.
@Suite("A persisted root kept only by its scope", .serialized)
struct ScopeOfAPersistedRootTests {
    @Test(arguments: 0..<10)
    func theRootEndingAfterItsScopeWritesEveryActionDispatchedThroughTheScope(round: Int) async throws {
        let storage = InMemoryStorage()
        let key = "scope.root-ends.\(round)"
        let threads = 4
        let perThread = 300
        let (done, weakRoot): ([DispatchSemaphore], SharedWeak<Store<Tally, Int>>) = {
            let root = Store<Tally, Int>(
                initialState: Tally(), key: key, storage: storage, codec: .json,
                writes: .coalesced(window: .seconds(3600)), externalChanges: .ignore, clock: ManualClock(),
                reducer: { state, amount in
                    state.count += amount
                    return .none
                },
                middleware: []
            )
            let scope = root.scope(state: \.count, action: { (amount: Int) in amount })
            let seen = Recorder<Int>()
            let token = scope.subscribe { seen.append($0) }
            let threadsDone = (0..<threads).map { index in
                onAThreadOfItsOwn { [scope] in
                    for _ in 0..<perThread {
                        let before = scope.state
                        scope.dispatch(1)
                        // Read your own write: the action is applied once dispatch returns.
                        if scope.state <= before { Issue.record("thread \(index) did not read its own write") }
                    }
                    if index == 0 { token.cancel() }
                }
            }
            return (threadsDone, SharedWeak(root))
        }()
        for semaphore in done { #expect(await waitOffThePool(for: semaphore)) }
        #expect(await eventually { weakRoot.object == nil }, "the root did not end")
        // The root ends on the thread that let it go last, which writes before its release returns: wait for it.
        #expect(await eventually { storage.contents(of: key) != nil }, "the root ended without writing")
        let data = try #require(storage.contents(of: key))
        #expect(try JSONDecoder().decode(Tally.self, from: data) == Tally(count: threads * perThread))
    }
}
