import Dispatch
import Foundation
@testable import Statehouse

// A store counting its actions in several parts of its state (a count, rows, a tuple, a child), for the tests of
// selection groups and of subscribers added from everywhere.

enum SGToggle: Sendable { case increment, hold, subscribeNow, noop }

struct SGTally: Equatable, Sendable {
    var count = 0
    var holds = 0
    var rows = [Int](repeating: 0, count: 100)
    var pair: (Int, Int8) = (0, 0)
    var child = SGChild()
    static func == (a: SGTally, b: SGTally) -> Bool {
        a.count == b.count && a.holds == b.holds && a.rows == b.rows && a.pair == b.pair && a.child == b.child
    }
}

struct SGChild: Equatable, Sendable {
    var value = 0
    var name = ""
}

/// A store that a `.hold` keeps busy without its state lock held (see `storeWithABlockingSubscriber`).
func tallyStoreWithABlockingSubscriber() -> (
    store: Store<SGTally, SGToggle>, blocker: SubscriptionToken, entered: DispatchSemaphore, release: DispatchSemaphore
) {
    storeWithABlockingSubscriber(SGTally(), reducer: tallyReducer, holds: \.holds)
}

func tallyReducer(_ state: inout SGTally, _ action: SGToggle) {
    if action == .hold { state.holds += 1 }
    switch action {
    case .increment, .hold, .subscribeNow:
        state.count += 1
        state.rows[state.count % 100] = state.count
        state.pair.0 = state.count
        state.child.value = state.count
    case .noop:
        break
    }
}

let tallyKeyPaths: [any KeyPath<SGTally, Int> & Sendable] = [\.count, \.pair.0, \.child.value]
