import Dispatch
import Foundation
import Observation
import Statehouse

// The code blocks of the DocC articles, inside functions so that they compile here. `DocumentationTests` checks that
// every block of every article appears in this folder, and runs these functions.

enum ArticleExamples {
    // Statehouse.md
    static func overview() {
        let theme = StateContainer("blue", key: "themeColor")
        let token = theme.observe { print("theme is now", $0) }
        theme ~> "green"
        token.cancel()
    }

    // StateContainers.md
    static func containers() {
        let rating = StateContainer<Int?>(nil, key: "appRating")
        rating.modify(4)
        rating ~> nil                                  // the same as modify
        let count = StateContainer(0, key: "launches")
        count.update { $0 += 1 }                       // read-modify-write in one step
    }

    // Listeners.md
    static func listeners() async {
        let theme = StateContainer("blue", key: "listeners.theme")
        let renderQueue = DispatchQueue(label: "render")
        var tokens = Set<SubscriptionToken>()
        theme.observe(initial: true, on: .queue(renderQueue)) { color in print("render", color) }
            .store(in: &tokens)
        theme.bind(name: "Header.title") { print("title:", $0) }
        theme.bind(name: "Header.title") { print("new title:", $0) }   // replaces the first closure
        theme.bindAndFire(name: "Footer") { print("footer:", $0) }     // called at once, then on changes
        theme.unbind(name: "Footer")
        for await color in theme.values {
            print("async:", color)
            break
        }
        let read = withObservationTracking { theme.value } onChange: { print("theme will change") }
        print(read)
        theme ~> "green"
        tokens.removeAll()
    }

    final class UserInfo {
        @Listenable var name = "NIX"
    }

    static func listenable() {
        let user = UserInfo()
        user.$name.bindAndFire(name: "FirstScreen.title") { print("name:", $0) }   // name: NIX
        user.name = "Ann"                                                        // name: Ann
    }

    // PersistingState.md
    static func persistence(directory: URL) throws {
        let settings = StateContainer(DocSettings(), key: "docs.settings", storage: .file(directory: directory))
        settings.update { $0.theme = "green" }      // saved within 50 ms, together with changes made meanwhile
        try settings.flush()                        // or now
        let rating = StateContainer<Int?>(nil, key: "docs.appRating", storage: .memory)   // nil removes the stored entry
        let audit = StateContainer([String](), key: "docs.audit", storage: .file(directory: directory), writes: .writeThrough)
        audit.update { $0.append("rated") }
        rating.modify(5)
        if let error = settings.storageError?.value {
            print("could not save:", error)
        }
    }

    // PersistingState.md. Compiled, not run: it would take over the test runner's SIGTERM and SIGINT.
    // `TerminationTests` checks what it does, in a child process.
    static func terminationHandling() {
        StatehouseLifecycle.flushOnTermination()   // SIGTERM and SIGINT: write everything pending, then end as the signal would
    }

    // TheStore.md
    static func store() {
        struct Counter: Equatable, Sendable { var count = 0; var name = "" }
        enum CounterAction: Sendable { case increment, rename(String) }

        let store = Store(initialState: Counter()) { (state: inout Counter, action: CounterAction) in
            switch action {
            case .increment: state.count += 1
            case .rename(let name): state.name = name
            }
        }
        let token = store.subscribe(\.count) { count in print("count:", count) }   // count: 0
        store.dispatch(.increment)                                                // count: 1
        store.dispatch(.rename("clicks"))                                         // nothing: count did not change
        token.cancel()

        // Read your own write
        store.dispatch(.increment)
        assert(store.state.count >= 1)   // this thread's increment is in the state, whatever other threads do
    }

    // UndoAndRedo.md
    static func undo() -> [[String]] {
        struct Doc: Equatable, Sendable { var lists = [["Writing", "Reading"], []] }
        enum DocAction: Sendable {
            case delete(String), remove(String, from: Int), insert(String, into: Int), serverSaved
            var isUndoable: Bool { if case .serverSaved = self { false } else { true } }
            var menuName: String? { if case .delete(let name) = self { "Delete \(name)" } else { nil } }
        }
        let docReducer: @Sendable (inout Doc, DocAction) -> Void = { doc, action in
            switch action {
            case .delete(let name): doc.lists[0].removeAll { $0 == name }
            case .remove(let name, let list): doc.lists[list].removeAll { $0 == name }
            case .insert(let name, let list): doc.lists[list].append(name)
            case .serverSaved: break
            }
        }
        let (item, source, target) = ("Reading", 0, 1)

        let store = Store(
            initialState: Doc(), reducer: docReducer,
            undo: UndoPolicy(limit: 100, name: { $0.menuName }) { $0.isUndoable }
        )
        store.dispatch(.delete("Writing"))
        let menuItem = "Undo " + (store.undoName ?? "")   // "Undo Delete Writing"
        store.undo()
        store.redo()
        precondition(menuItem == "Undo Delete Writing")

        store.undoGroup("Move") {
            store.dispatch(.remove(item, from: source))
            store.dispatch(.insert(item, into: target))
        }
        precondition(store.undoName == "Move")
        store.undo()
        return store.state.lists
    }

    // UndoAndRedo.md, Persisted, replicated and synced stores
    static func persistedUndo(in folder: URL) -> [[String]] {
        struct Doc: Codable, Equatable, Sendable { var lists = [["Writing", "Reading"]] }
        enum DocAction: Codable, Equatable, Sendable {
            case delete(String)
            var isUndoable: Bool { true }
        }
        let docReducer: @Sendable (inout Doc, DocAction) -> Void = { doc, action in
            if case .delete(let name) = action { doc.lists[0].removeAll { $0 == name } }
        }

        let store = Store(
            initialState: Undoable(Doc()), key: "doc", storage: .file(directory: folder),
            reducer: Reducer(docReducer).undoable(UndoPolicy { $0.isUndoable })
        )
        store.dispatch(.action(.delete("Writing")))
        store.undo()                                    // dispatches .undo
        let lists = store.state.present.lists
        return lists
    }

    // TheStore.md, Composing reducers
    static func composingReducers() {
        struct Todo: Equatable, Identifiable, Sendable { let id: Int; var done = false }
        enum TodoAction: Sendable { case toggle }
        struct Todos: Equatable, Sendable { var items: [Todo] = []; var editing: Todo? }
        enum TodosAction: Sendable { case todo(id: Int, action: TodoAction), editor(TodoAction), add(Todo) }

        let todo = Reducer<Todo, TodoAction> { state, action in
            switch action { case .toggle: state.done.toggle() }
        }
        let todos = Reducer<Todos, TodosAction> { state, action in
            if case .add(let new) = action { state.items.append(new) }
        }
        .forEach(\.items, action: ActionCase(TodosAction.todo), element: todo)
        .ifLet(\.editing, action: ActionCase(TodosAction.editor), then: todo)
        let store = Store(initialState: Todos(), reducer: todos)
        store.dispatch(.add(Todo(id: 1)))
        store.dispatch(.todo(id: 1, action: .toggle))              // store.state.items[0].done == true
        precondition(store.state.items == [Todo(id: 1, done: true)])
    }

    // TheStore.md, Dependencies
    static func dependencies() {
        struct Environment: Sendable {
            var clock: any Clock<Duration>
            var uuid: @Sendable () -> UUID
        }
        enum Action: Sendable { case start, tick }

        let live = Environment(clock: ContinuousClock(), uuid: { UUID() })
        let ticker = Store(initialState: 0, environment: live) { (state: inout Int, action: Action, environment) in
            switch action {
            case .start:
                return .run { send in
                    try await environment.clock.sleep(for: .seconds(1))
                    send(.tick)
                }
            case .tick:
                state += 1
                return .none
            }
        }
        ticker.dispatch(.start)
    }

    // ViewStateToolkit.md
    static func loadingState() -> LoadingState<[String], SearchFailure> {
        var jobs: LoadingState<[String], SearchFailure> = .idle
        jobs = .loading(nil)                            // first load: a placeholder
        jobs = .loaded(["Swift", "Statehouse"])         // the content
        jobs = .loading(jobs.value)                     // refreshing: the content, with an indicator
        jobs = .failed(.offline, jobs.value)            // the content, with the error as an alert
        switch jobs.presentation {
        case .placeholder: print("spinner")
        case .content(let jobs, let refreshing): print(jobs, refreshing ? "(refreshing)" : "")
        case .contentWithError(let jobs, let error): print(jobs, "alert:", error)
        case .errorPlaceholder(let error): print("error:", error)
        }
        return jobs
    }
}

enum SearchFailure: Error, Equatable, Sendable {
    case offline
}

private let spinnerKey = AssociatedKey<Spinner>(.strong)

final class Spinner {
    var isSpinning = false
}

protocol Refreshable: AssociatedObjects {}

extension Refreshable {
    var spinner: Spinner {
        associatedValue(for: spinnerKey) { Spinner() }   // made once per object, kept while it lives
    }
}

final class Feed: Refreshable, StoreSubscribing, @unchecked Sendable {  // the article's example: one thread
    var titles: [String] = []

    func start(store: Store<LoadingState<[String], SearchFailure>, JobsFeedAction>) {
        subscribe(store) { feed, state in
            feed.spinner.isSpinning = state.isLoading
            feed.titles = state.value ?? []
        }
    }
}

enum JobsFeedAction: Sendable {
    case loaded([String])
}

struct DocSettings: Codable, Sendable {
    var theme = "blue"
}
