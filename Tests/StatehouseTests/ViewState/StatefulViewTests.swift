import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A stand-in for a screen: it records what is visible, like a test would read a real view hierarchy.
final class FakeJobsScreen: LoadingStatefulView, @unchecked Sendable {  // test-only: used from the test's thread
    final class Placeholder {
        var isVisible = false
        var error: APIError?
    }

    var shownJobs: [String]?
    var alerts: [APIError] = []
    var refreshing = false
    var renders = 0
    var placeholdersMade = 0

    func render(state: LoadingState<[String], APIError>) {
        renders += 1
        shownJobs = nil
        render(state: state) { jobs in shownJobs = jobs }
    }

    func makeLoadingView() -> Placeholder { placeholdersMade += 1; return Placeholder() }
    func makeErrorView() -> Placeholder { placeholdersMade += 1; return Placeholder() }
    func setLoadingView(_ view: Placeholder, visible: Bool) { view.isVisible = visible }
    func setErrorView(_ view: Placeholder, visible: Bool, error: APIError?) {
        view.isVisible = visible
        view.error = error
    }
    func presentAlert(for error: APIError) { alerts.append(error) }
    func setRefreshing(_ refreshing: Bool) { self.refreshing = refreshing }
}

enum JobsAction: Sendable {
    case set(LoadingState<[String], APIError>)
}

func jobsStore() -> Store<LoadingState<[String], APIError>, JobsAction> {
    Store(initialState: .idle) { (state: inout LoadingState<[String], APIError>, action: JobsAction) in
        if case .set(let new) = action { state = new }
    }
}

@Suite("StatefulView and LoadingStatefulView")
struct StatefulViewTests {
    static let failure = APIError(message: "offline")

    @Test func eachLoadingCaseShowsWhatTheArticleSays() {
        let screen = FakeJobsScreen()
        let store = jobsStore()
        screen.connect(to: store)

        // idle and first load: the loading placeholder only.
        #expect(screen.loadingView.isVisible && !screen.errorView.isVisible && screen.shownJobs == nil)
        store.dispatch(.set(.loading(nil)))
        #expect(screen.loadingView.isVisible && !screen.errorView.isVisible && screen.shownJobs == nil)
        // refreshing with data: the data, with the refreshing indicator.
        store.dispatch(.set(.loading(["a"])))
        #expect(!screen.loadingView.isVisible && !screen.errorView.isVisible && screen.shownJobs == ["a"])
        #expect(screen.refreshing)
        // loaded: the data.
        store.dispatch(.set(.loaded(["a", "b"])))
        #expect(!screen.loadingView.isVisible && !screen.errorView.isVisible && screen.shownJobs == ["a", "b"])
        #expect(!screen.refreshing)
        // failed with data: the data, and an alert.
        store.dispatch(.set(.failed(Self.failure, ["a", "b"])))
        #expect(!screen.loadingView.isVisible && !screen.errorView.isVisible && screen.shownJobs == ["a", "b"])
        #expect(screen.alerts == [Self.failure])
        // failed without data: the error placeholder only.
        store.dispatch(.set(.failed(Self.failure, nil)))
        #expect(!screen.loadingView.isVisible && screen.errorView.isVisible && screen.shownJobs == nil)
        #expect(screen.errorView.error == Self.failure)
        // The placeholders were made once each and kept.
        #expect(screen.placeholdersMade == 2)
    }

    @Test func rendersOnlyWhenTheViewStateChanged() {
        let screen = FakeJobsScreen()
        let store = jobsStore()
        screen.connect(to: store)
        store.dispatch(.set(.idle))
        store.dispatch(.set(.loaded(["a"])))
        store.dispatch(.set(.loaded(["a"])))
        #expect(screen.renders == 2)
    }

    @Test func connectingAgainReplacesTheConnection() {
        let screen = FakeJobsScreen()
        let store = jobsStore()
        screen.connect(to: store)
        screen.connect(to: store)
        let rendersAfterConnecting = screen.renders
        store.dispatch(.set(.loaded(["a"])))
        #expect(screen.renders == rendersAfterConnecting + 1)
    }

    @Test func nothingIsDeliveredAfterTheViewDies() {
        let store = jobsStore()
        let delivered = Recorder<Int>()
        weak var weakScreen: FakeJobsScreen?
        do {
            let screen = FakeJobsScreen()
            weakScreen = screen
            screen.subscribe(store) { _, _ in delivered.append(1) }
        }
        #expect(weakScreen == nil)
        let before = delivered.count
        store.dispatch(.set(.loaded(["late"])))
        #expect(delivered.count == before)
        AssociatedObjectsTable.shared.releaseDeadOwners()
        #expect(store.core.withLock { $0.groups.compactMap { $0 }.allSatisfy { $0.subscribers.isEmpty } })
    }

    @Test func subscribingAgainToTheSameStoreReplacesTheFirst() {
        let store = jobsStore()
        let screen = FakeJobsScreen()
        let first = Recorder<Int>()
        let second = Recorder<Int>()
        screen.subscribe(store) { _ in first.append(1) }
        screen.subscribe(store) { _ in second.append(1) }
        store.dispatch(.set(.loading(nil)))
        #expect(first.count == 1)  // the initial call only
        #expect(second.count == 2)  // initial, then the dispatch
        screen.unsubscribe(from: store)
        store.dispatch(.set(.idle))
        #expect(second.count == 2)
    }
}
