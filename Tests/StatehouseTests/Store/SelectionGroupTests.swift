import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Subscribers of one key path share a group (one selection, one comparison per change); a subscriber selecting with
/// a closure has a group of its own. Groups are made, emptied, dropped and their numbers given to others while
/// threads subscribe and dispatch: every subscriber keeps its own selection, and hears no stale, repeated or late
/// value.
@Suite("Selection groups: subscribers sharing a key path, or selecting on their own", .serialized)
struct SelectionGroupTests {
    /// 64 rows and two fields, for key paths with subscript arguments and without.
    struct Rows: Equatable, Sendable {
        var values: [Int] = Array(0..<64)
        var a = 1000
        var b = 2000
    }

    enum RowAction: Sendable {
        case set(Int, Int)
    }

    func makeStore() -> Store<Rows, RowAction> {
        Store(initialState: Rows()) { state, action in
            switch action {
            case .set(let index, let value): state.values[index] = value
            }
            return .none
        }
    }

    /// Threads subscribing and cancelling, in shared key-path groups, in groups of their own and on rows, while others
    /// dispatch: no value older than the state before subscribing, none twice, none after `cancel()` returned; a
    /// steady subscriber hears every count in order.
    @Test func subscribersChurningOnSharedAndOwnGroupsWhileOthersDispatchSeeNoStaleRepeatedOrLateValues() async {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let dispatchers = 2
        let perDispatcher = 3_000
        let violations = SGHeard<String>()
        let steady = SGHeard<Int>()
        let steadyToken = store.subscribe(\.count) { steady.append($0) }
        await onNewThreads(dispatchers + 4) { thread in
            if thread < dispatchers {
                for _ in 0..<perDispatcher { store.dispatch(.increment) }
                return
            }
            for round in 0..<400 {
                let before = store.state.count
                let heard = SGHeard<Int>()
                let cancelled = Atomic<Bool>(false)
                let listener: @Sendable (Int) -> Void = { value in
                    if cancelled.load(ordering: .sequentiallyConsistent) {
                        violations.append("thread \(thread) round \(round): called after cancel with \(value)")
                    }
                    heard.append(value)
                }
                let token: SubscriptionToken
                switch (thread + round) % 5 {
                case 0, 1, 2:
                    token = store.subscribe(tallyKeyPaths[(thread + round) % 3], listener)
                case 3:
                    token = store.subscribe(select: { $0.count }, isDuplicate: ==, listener)
                default:
                    let row = round % 100
                    token = store.subscribe(\.rows[row]) { _ in listener(store.state.count) }
                }
                if round.isMultiple(of: 3) { store.dispatch(.noop) }
                token.cancel()
                cancelled.store(true, ordering: .sequentiallyConsistent)
                let values = heard.values
                if (thread + round) % 5 != 4 {
                    if let first = values.first, first < before {
                        violations.append("thread \(thread) round \(round): first value \(first) older than \(before)")
                    }
                    if zip(values, values.dropFirst()).contains(where: { $0 >= $1 }) {
                        violations.append("thread \(thread) round \(round): not strictly increasing \(values)")
                    }
                }
            }
        }
        let total = dispatchers * perDispatcher
        #expect(await waitUntil { steady.values.last == total })
        let values = steady.values
        #expect(values.first == 0)
        #expect(!zip(values, values.dropFirst()).contains(where: { $0 >= $1 }))
        #expect(violations.values.isEmpty, "\(violations.values.prefix(10))")
        steadyToken.cancel()
    }

    /// More than 64 keyed groups made, then dropped, over and over while a thread dispatches, their numbers given to
    /// groups of other key paths and types: each subscriber hears only its own selection, each value once.
    @Test func manyDistinctKeyPathsDroppedAndReusedWhileDispatchingKeepEachSubscriberOnItsOwnSelection() async {
        // Over 64 keyed groups, then none: `dropEmptyKeyedGroups` and `dropAllGroups` run while other threads
        // subscribe and dispatch, and group numbers are given to new groups of other key paths and types.
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let violations = SGHeard<String>()
        let dispatchesDone = SGCounter()
        await onNewThreads(4) { thread in
            if thread == 0 {
                for _ in 0..<3_000 { store.dispatch(.increment) }
                dispatchesDone.add()
                return
            }
            for round in 0..<150 {
                var tokens: [SubscriptionToken] = []
                let hearers = (0..<70).map { _ in SGHeard<String>() }
                for index in 0..<70 {
                    let row = (index + thread * 7 + round) % 100
                    let heard = hearers[index]
                    if index.isMultiple(of: 7) {
                        // A different selected type under the same group numbers: a wrong group would be read
                        // through the wrong type.
                        tokens.append(store.subscribe(\.child.name) { heard.append("name:\($0)") })
                    } else if index.isMultiple(of: 5) {
                        tokens.append(store.subscribe(select: { "own:\($0.rows[row])" }, isDuplicate: ==) {
                            heard.append($0)
                        })
                    } else {
                        tokens.append(store.subscribe(\.rows[row]) { heard.append("row\(row):\($0)") })
                    }
                }
                // The store may be busy on another thread: the first values come once it gets to the registrations.
                let allHeard = spinWait(timeout: .seconds(60)) { hearers.allSatisfy { $0.count > 0 } }
                if !allHeard { violations.append("thread \(thread) round \(round): a first value never came") }
                for (index, heard) in hearers.enumerated() {
                    let row = (index + thread * 7 + round) % 100
                    let prefix = index.isMultiple(of: 7) ? "name:" : index.isMultiple(of: 5) ? "own:" : "row\(row):"
                    let values = heard.values
                    if let bad = values.first(where: { !$0.hasPrefix(prefix) }) {
                        violations.append("thread \(thread) index \(index): heard \(bad), wanted \(prefix)…")
                    }
                    if values.count != Set(values).count {
                        violations.append("thread \(thread) index \(index): a value twice: \(values)")
                    }
                }
                for token in tokens.shuffled() { token.cancel() }
            }
        }
        #expect(dispatchesDone.current == 1)
        #expect(violations.values.isEmpty, "\(violations.values.prefix(10))")
        let final = SGHeard<Int>()
        let token = store.subscribe(\.rows[3000 % 100]) { final.append($0) }
        #expect(final.values == [3_000])
        token.cancel()
    }

    /// Key paths with subscript arguments made anew each time, literals, many distinct ones; groups dropped and their
    /// numbers given to others between lookups: every subscriber gets its own key path's value.
    @Test func keyPathGroupsNeverLeadToAnotherKeyPath() {
        let store = makeStore()
        var rng = SplitMix64(seed: 7)
        var expected = Rows()
        var history: [Set<Int>] = (0..<64).map { [$0] }
        var live: [(index: Int, token: SubscriptionToken, seen: Recorder<Int>)] = []
        for step in 0..<4_000 {
            let roll = rng.next(below: 100)
            if roll < 45 {
                let index = rng.next(below: 64)
                let seen = Recorder<Int>()
                let keyPath: any KeyPath<Rows, Int> & Sendable = \Rows.values[index]
                let token = store.subscribe(keyPath) { seen.append($0) }
                #expect(seen.elements == [expected.values[index]], "step \(step): subscribed to values[\(index)]")
                live.append((index, token, seen))
            } else if roll < 80, !live.isEmpty {
                let victim = live.remove(at: rng.next(below: live.count))
                victim.token.cancel()
            } else if roll < 85 {
                // drop everything: the next subscribers get the groups' numbers anew
                for entry in live { entry.token.cancel() }
                live.removeAll()
            } else {
                let index = rng.next(below: 64)
                let value = rng.next(below: 1_000_000) + 100
                expected.values[index] = value
                history[index].insert(value)
                store.dispatch(.set(index, value))
            }
            // Literals without arguments, each one object for the program's life, looked up between the others.
            if step % 7 == 0 {
                let seenA = Recorder<Int>()
                let seenB = Recorder<Int>()
                let ta = store.subscribe(\.a) { seenA.append($0) }
                let tb = store.subscribe(\.b) { seenB.append($0) }
                #expect(seenA.elements == [1000] && seenB.elements == [2000], "step \(step)")
                ta.cancel()
                tb.cancel()
            }
        }
        for entry in live {
            #expect(entry.seen.elements.last == expected.values[entry.index])
            #expect(Set(entry.seen.elements).isSubset(of: history[entry.index]), "values[\(entry.index)]")
        }
        for entry in live { entry.token.cancel() }
    }
}
