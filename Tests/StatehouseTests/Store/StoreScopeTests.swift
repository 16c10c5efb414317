import Foundation
import Observation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("Scoped stores")
struct ScopedStoreTests {
    struct App: Equatable, Sendable {
        var counter = Counter()
        var title = "app"
    }

    enum AppAction: Equatable, Sendable {
        case counter(CounterAction)
        case retitle(String)
    }

    static func appStore() -> Store<App, AppAction> {
        Store(initialState: App()) { (state: inout App, action: AppAction) in
            switch action {
            case .counter(let action): counterReducer(&state.counter, action)
            case .retitle(let title): state.title = title
            }
        }
    }

    @Test func childReadsTheParentsStateAndSendsThroughTheParent() {
        let app = Self.appStore()
        let child = app.scope(state: \.counter, action: AppAction.counter)
        child.dispatch(.increment)
        #expect(child.state.count == 1)
        #expect(app.state.counter.count == 1)
        app.dispatch(.counter(.set(7)))
        #expect(child.state.count == 7)
    }

    @Test func childSubscribersHearOnlyOfTheirPart() {
        let app = Self.appStore()
        let child = app.scope(state: \.counter, action: AppAction.counter)
        let counts = Recorder<Int>()
        let token = child.subscribe(\.count) { counts.append($0) }
        app.dispatch(.retitle("new"))
        child.dispatch(.increment)
        #expect(counts.elements == [0, 1])
        token.cancel()
    }

    @Test func aScopeOfAScopeWorks() {
        let app = Self.appStore()
        let counter = app.scope(state: \.counter, action: AppAction.counter)
        let name = counter.scope(state: \.name, action: CounterAction.rename)
        name.dispatch("deep")
        #expect(app.state.counter.name == "deep")
        #expect(name.state == "deep")
    }

    @Test func childKeepsTheParentAlive() {
        weak var weakApp: Store<App, AppAction>?
        var child: Store<Counter, CounterAction>?
        do {
            let app = Self.appStore()
            weakApp = app
            child = app.scope(state: \.counter, action: AppAction.counter)
        }
        #expect(weakApp != nil)
        child?.dispatch(.increment)
        #expect(weakApp?.state.counter.count == 1)
        child = nil
        #expect(weakApp == nil)
    }
}

/// A scoped store shows a part of its parent's state and sends its actions through the parent. It follows the parent
/// (reads its part once per change) only while it has subscribers, is shared by the calls from one place, and lives as
/// long as a token of it does; an `ifLet` scope is `nil` while its part is.
@Suite("Scoped stores: lazy, shared, optional")
struct StoreScopeTests {
    // MARK: Key-path runs

    @Test func makingAScopeRunsItsKeyPathNever() {
        let parent = makeCountedParentStore()
        let child = parent.scope(state: \.countedChild, action: CountedParentAction.child)
        #expect(parent.state.childReads.value == 0)
        withExtendedLifetime(child) {}
    }

    @Test func aScopeWithNoSubscriberCostsNothingPerDispatchAndReadsThroughItsParent() {
        let parent = makeCountedParentStore()
        let child = parent.scope(state: \.countedChild, action: CountedParentAction.child)
        for _ in 0..<10 {
            parent.dispatch(.other)
            parent.dispatch(.child(.increment))
        }
        #expect(parent.state.childReads.value == 0)
        #expect(child.state.count == 10)
        #expect(parent.state.childReads.value == 1, "a read of the scope's state reads the parent's, once")
        child.dispatch(.increment)
        #expect(parent.state.child.count == 11)
    }

    @Test func aScopeWithSubscribersRunsItsKeyPathOncePerChangeAndStopsWithTheLastOne() {
        let parent = makeCountedParentStore()
        let reads = parent.state.childReads
        let child = parent.scope(state: \.countedChild, action: CountedParentAction.child)
        let counts = Recorder<Int>()
        let token = child.subscribe(\.count) { counts.append($0) }
        #expect(reads.value == 1, "starting to follow reads the part once")
        for round in 1...10 {
            parent.dispatch(.other)
            parent.dispatch(.child(.increment))
            #expect(reads.value == 1 + 2 * round)
        }
        #expect(counts.elements == Array(0...10))
        let second = child.subscribe(\.name) { _ in }
        parent.dispatch(.other)
        #expect(reads.value == 22, "a second subscriber does not read again")
        token.cancel()
        parent.dispatch(.other)
        #expect(reads.value == 23, "one subscriber left: still following")
        second.cancel()
        let before = reads.value
        for _ in 0..<10 { parent.dispatch(.child(.increment)) }
        #expect(reads.value == before, "no subscriber left: not following")
        #expect(child.state.count == 20)
    }

    @Test func aScopeOfAScopeFollowsOnlyWhileItsOwnScopeHasSubscribers() {
        let parent = makeCountedParentStore()
        let reads = parent.state.childReads
        let child = parent.scope(state: \.countedChild, action: CountedParentAction.child)
        let name = child.scope(state: \.name, action: CounterAction.rename)
        parent.dispatch(.child(.rename("a")))
        #expect(reads.value == 0)
        #expect(name.state == "a")
        let names = Recorder<String>()
        let token = name.subscribe(\.self) { names.append($0) }
        let afterSubscribing = reads.value
        parent.dispatch(.child(.rename("b")))
        parent.dispatch(.other)
        #expect(reads.value == afterSubscribing + 2, "the middle scope follows, once per change")
        name.dispatch("c")
        #expect(names.elements == ["a", "b", "c"])
        token.cancel()
        let afterCancelling = reads.value
        parent.dispatch(.child(.rename("d")))
        #expect(reads.value == afterCancelling, "the middle scope stopped with its scope's last subscriber")
        #expect(name.state == "d")
    }

    @Test func aScopeThatStopsFollowingStartsAgainFromTheCurrentState() {
        let parent = makeCountedParentStore()
        let child = parent.scope(state: \.countedChild, action: CountedParentAction.child)
        let first = Recorder<Int>()
        child.subscribe(\.count) { first.append($0) }.cancel()
        for _ in 0..<5 { parent.dispatch(.child(.increment)) }
        let second = Recorder<Int>()
        let token = child.subscribe(\.count) { second.append($0) }
        parent.dispatch(.child(.increment))
        #expect(first.elements == [0])
        #expect(second.elements == [5, 6])
        token.cancel()
    }

    // MARK: One selection per change

    @Test func subscribersOfOneKeyPathSelectOncePerChange() {
        let store = makeCountedParentStore()
        let reads = store.state.countReads
        let tokens = (0..<5).map { _ in store.subscribe(\.countedCount) { _ in } }
        #expect(reads.value == 1, "one selection for the group, made when the first subscriber joined")
        for round in 1...10 {
            store.dispatch(.child(.increment))
            #expect(reads.value == 1 + round)
        }
        store.dispatch(.other)
        #expect(reads.value == 12, "a change of another field is compared once too")
        withExtendedLifetime(tokens) {}
    }

    @Test func aSelectorRunsOncePerChangeAndItsSelectionIsWhatTheListenerGets() {
        let store = makeCountedParentStore()
        let runs = RunCount()
        let received = Recorder<Int>()
        let token = store.subscribe(select: { state -> Int in
            runs.count()
            return state.child.count * 10
        }, isDuplicate: ==) { received.append($0) }
        #expect(runs.value == 1)
        for round in 1...10 {
            store.dispatch(.child(.increment))
            #expect(runs.value == 1 + round)
        }
        #expect(received.elements == (0...10).map { $0 * 10 })
        token.cancel()
    }

    @Test func queuedSubscribersGetTheSelectionOfTheirChange() async {
        let store = makeCountedParentStore()
        let reads = store.state.countReads
        let received = Recorder<Int>()
        let token = store.subscribe(\.countedCount, on: .queue(DispatchQueue(label: "scope.tests"))) { received.append($0) }
        for _ in 0..<50 { store.dispatch(.child(.increment)) }
        #expect(await eventually { received.count == 51 })
        #expect(received.elements == Array(0...50))
        #expect(reads.value == 51)
        token.cancel()
    }

    @Test func anUnchangedScopeWithNoSubscriberSelectsNothing() {
        let parent = makeCountedParentStore()
        let child = parent.scope(state: \.child, action: CountedParentAction.child)
        let runs = RunCount()
        child.subscribe(select: { state -> Int in
            runs.count()
            return state.count
        }, isDuplicate: ==) { _ in }.cancel()
        #expect(runs.value == 1)
        for _ in 0..<10 { parent.dispatch(.other) }
        #expect(runs.value == 1)
    }

    // MARK: ifLet

    @Test func anIfLetScopeIsNilWhileThePartIsNil() {
        let parent = makeCountedParentStore()
        let detail: Store<Counter, CounterAction>? = parent.scope(ifLet: \.detail, action: CountedParentAction.detail)
        #expect(detail == nil)
    }

    @Test func anIfLetScopeShowsThePartThenKeepsTheLastNonNilValue() {
        let parent = makeCountedParentStore()
        parent.dispatch(.setDetail(Counter(count: 1, name: "first")))
        let made: Store<Counter, CounterAction>? = parent.scope(ifLet: \.detail, action: CountedParentAction.detail)
        guard let detail = made else {
            Issue.record("no scope for a non-nil part")
            return
        }
        #expect(detail.state == Counter(count: 1, name: "first"))
        detail.dispatch(.increment)
        #expect(parent.state.detail?.count == 2)
        #expect(detail.state.count == 2)
        // Set and cleared with nobody reading in between: the last non-nil value is still the one shown.
        parent.dispatch(.setDetail(Counter(count: 5, name: "second")))
        parent.dispatch(.setDetail(nil))
        #expect(detail.state == Counter(count: 5, name: "second"))
        detail.dispatch(.increment)  // goes to the parent, whose reducer ignores it with no detail
        #expect(parent.state.detail == nil)
        #expect(detail.state.count == 5)
        parent.dispatch(.setDetail(Counter(count: 9)))
        #expect(detail.state.count == 9)
    }

    @Test func anIfLetScopesSubscribersHearOfChangesButNotOfNil() {
        let parent = makeCountedParentStore()
        parent.dispatch(.setDetail(Counter()))
        guard let detail = parent.scope(ifLet: \.detail, action: CountedParentAction.detail) else {
            Issue.record("no scope for a non-nil part")
            return
        }
        let counts = Recorder<Int>()
        let token = detail.subscribe(\.count) { counts.append($0) }
        detail.dispatch(.increment)
        parent.dispatch(.setDetail(nil))
        parent.dispatch(.other)
        parent.dispatch(.setDetail(Counter(count: 7)))
        #expect(counts.elements == [0, 1, 7])
        token.cancel()
    }

    @Test func anIfLetScopeFromTheSamePlaceIsTheSameStoreAndNilWhenThePartIs() {
        let parent = makeCountedParentStore()
        func detail() -> Store<Counter, CounterAction>? {
            parent.scope(ifLet: \.detail, action: CountedParentAction.detail)
        }
        parent.dispatch(.setDetail(Counter()))
        let made = (0..<3).map { _ in detail() }
        #expect(made[0] != nil)
        #expect(made[0] === made[1] && made[1] === made[2])
        parent.dispatch(.setDetail(nil))
        #expect(detail() == nil, "the store made here lives, but the part is nil now")
        parent.dispatch(.setDetail(Counter(count: 3)))
        #expect(detail() === made[0])
        #expect(made[0]?.state.count == 3)
        withExtendedLifetime(made) {}
    }

    // MARK: Identity

    @Test func theSameCallSiteReturnsTheSameScopeWhileItLives() {
        let parent = makeCountedParentStore()
        var scopes: [Store<Counter, CounterAction>] = []
        for _ in 0..<5 {
            scopes.append(parent.scope(state: \.child, action: CountedParentAction.child))
        }
        #expect(scopes.allSatisfy { $0 === scopes[0] })
        let otherKeyPath = parent.scope(state: \.countedChild, action: CountedParentAction.child)
        let otherPlace = parent.scope(state: \.child, action: CountedParentAction.child)
        #expect(otherKeyPath !== scopes[0])
        #expect(otherPlace !== scopes[0])
    }

    @Test func aScopeFromTheSamePlaceIsMadeAgainOnceTheFirstEnded() {
        let parent = makeCountedParentStore()
        weak var first: Store<Counter, CounterAction>?
        for _ in 0..<2 {
            let scope = parent.scope(state: \.child, action: CountedParentAction.child)
            if first == nil {
                first = scope
            } else {
                #expect(scope === first, "still alive: the same store")
            }
        }
        #expect(first == nil, "the cache holds its scopes weakly")
        let again = parent.scope(state: \.child, action: CountedParentAction.child)
        again.dispatch(.increment)
        #expect(again.state.count == 1)
    }

    // MARK: Tokens keep their store alive

    @Test func aTokenKeepsTheScopeItSubscribedToAliveUntilCancelled() {
        let parent = makeCountedParentStore()
        let counts = Recorder<Int>()
        weak var weakChild: Store<Counter, CounterAction>?
        let token: SubscriptionToken = {
            let child = parent.scope(state: \.child, action: CountedParentAction.child)
            weakChild = child
            return child.subscribe(\.count) { counts.append($0) }
        }()
        parent.dispatch(.child(.increment))
        #expect(weakChild != nil)
        #expect(counts.elements == [0, 1])
        token.cancel()
        #expect(weakChild == nil, "the cancelled token let the scoped store go")
        parent.dispatch(.child(.increment))
        #expect(counts.elements == [0, 1])
    }

    @Test func releasingTheTokenReleasesTheStore() {
        weak var weakStore: Store<Counter, CounterAction>?
        var token: SubscriptionToken? = {
            let store = makeCounterStore()
            weakStore = store
            return store.subscribe(\.count) { _ in }
        }()
        #expect(weakStore != nil)
        weakStore?.dispatch(.increment)
        #expect(weakStore?.state.count == 1)
        #expect(token != nil)
        token = nil
        #expect(weakStore == nil, "the store ended with its last token")
    }

    @Test func aCancelledTokenKeptAroundDoesNotKeepTheStore() {
        weak var weakStore: Store<Counter, CounterAction>?
        var tokens = Set<SubscriptionToken>()
        do {
            let store = makeCounterStore()
            weakStore = store
            store.subscribe(\.count) { _ in }.store(in: &tokens)
        }
        #expect(weakStore != nil)
        tokens.first?.cancel()
        #expect(weakStore == nil)
        #expect(tokens.count == 1)
    }

    @Test func aTokenOfAScopeOfAScopeKeepsTheWholeChainWorking() {
        let counts = Recorder<Int>()
        weak var weakRoot: Store<CountedParent, CountedParentAction>?
        let token: SubscriptionToken = {
            let root = makeCountedParentStore()
            weakRoot = root
            return root.scope(state: \.child, action: CountedParentAction.child)
                .scope(state: \.count, action: { (value: Int) in CounterAction.set(value) })
                .subscribe(\.self) { counts.append($0) }
        }()
        weakRoot?.dispatch(.child(.increment))
        #expect(counts.elements == [0, 1])
        token.cancel()
        #expect(weakRoot == nil)
    }

    // MARK: Observation

    @Test func observationOfAScopeWithNoSubscriberHearsOfItsParentsChanges() {
        let parent = makeCountedParentStore()
        let child = parent.scope(state: \.child, action: CountedParentAction.child)
        let changed = RunCount()
        withObservationTracking {
            _ = child.state
        } onChange: {
            changed.count()
        }
        parent.dispatch(.child(.increment))
        #expect(changed.value == 1)
    }

    @Test func observationOfAScopeThatStopsFollowingIsToldToReadAgain() {
        let parent = makeCountedParentStore()
        let child = parent.scope(state: \.child, action: CountedParentAction.child)
        let token = child.subscribe(\.count) { _ in }
        let changed = RunCount()
        withObservationTracking {
            _ = child.state
        } onChange: {
            changed.count()
        }
        token.cancel()
        #expect(changed.value == 1)
    }
}
