import Statehouse
import StatehouseTestSupport
import Testing

@Suite("Reducer composition")
struct ReducerCompositionTests {
    struct Counter: Equatable, Sendable {
        var count = 0
    }

    enum CounterAction: Equatable, Sendable {
        case increment
        case incrementLater
    }

    static let counter = Reducer<Counter, CounterAction> { state, action in
        switch action {
        case .increment:
            state.count += 1
            return .none
        case .incrementLater:
            return .send(.increment)
        }
    }

    struct Todo: Equatable, Identifiable, Sendable {
        let id: Int
        var done = false
    }

    enum TodoAction: Equatable, Sendable {
        case toggle
        case toggleLater
    }

    static let todo = Reducer<Todo, TodoAction> { state, action in
        switch action {
        case .toggle:
            state.done.toggle()
            return .none
        case .toggleLater:
            return .send(.toggle)
        }
    }

    struct App: Equatable, Sendable {
        var left = Counter()
        var right = Counter()
        var editor: Counter?
        var todos: [Todo] = []
        var log: [String] = []
    }

    enum AppAction: Equatable, Sendable {
        case left(CounterAction)
        case right(CounterAction)
        case editor(CounterAction)
        case todo(id: Int, action: TodoAction)
        case openEditor
        case closeEditor
    }

    static let app = Reducer<App, AppAction>.combine(
        .scope(state: \.left, action: ActionCase(AppAction.left), child: counter),
        .scope(state: \.right, action: ActionCase(AppAction.right), child: counter),
        Reducer<App, AppAction> { state, action in
            switch action {
            case .openEditor: state.editor = Counter()
            case .closeEditor: state.editor = nil
            default: break
            }
            state.log.append("\(action)")
        }
        .ifLet(\.editor, action: ActionCase(AppAction.editor), then: counter)
        .forEach(\.todos, action: ActionCase(AppAction.todo), element: todo)
    )

    @Test func aScopedChildChangesOnlyItsSliceForItsCase() async {
        let store = Store(initialState: App(), reducer: Self.app)
        store.dispatch(.left(.increment))
        store.dispatch(.right(.incrementLater))
        #expect(await eventually { store.state.right.count == 1 })
        #expect(store.state.left.count == 1)
        // The child's effect came back as the parent's case, through the whole reducer.
        #expect(store.state.log.contains("\(AppAction.right(.increment))"))
    }

    @Test func casesWithTheSamePayloadTypeAreToldApart() {
        let left = ActionCase(AppAction.left)
        #expect(left.extract(.left(.increment)) == .increment)
        #expect(left.extract(.right(.increment)) == nil)
        #expect(left.extract(.openEditor) == nil)
    }

    @Test func aCaseWithLabelledIdAndActionIsFound() {
        let todo = ActionCase(AppAction.todo)
        let found = todo.extract(.todo(id: 3, action: .toggle))
        #expect(found?.0 == 3 && found?.1 == .toggle)
        #expect(todo.extract(.left(.increment)) == nil)
        #expect(todo.embed((4, .toggleLater)) == .todo(id: 4, action: .toggleLater))
    }

    @Test func ifLetRunsTheChildOnlyWhileItsStateIsPresent() async {
        let store = Store(initialState: App(), reducer: Self.app)
        store.dispatch(.editor(.increment))
        #expect(store.state.editor == nil)
        store.dispatch(.openEditor)
        store.dispatch(.editor(.increment))
        store.dispatch(.editor(.incrementLater))
        #expect(await eventually { store.state.editor?.count == 2 })
        store.dispatch(.closeEditor)
        store.dispatch(.editor(.increment))
        #expect(store.state.editor == nil)
        // The parent still sees the child's actions, present or not.
        #expect(store.state.log.filter { $0.hasPrefix("editor") }.count == 5)
    }

    @Test func forEachRunsTheElementReducerOnTheElementWithTheId() async {
        let store = Store(initialState: App(todos: [Todo(id: 1), Todo(id: 2)]), reducer: Self.app)
        store.dispatch(.todo(id: 2, action: .toggle))
        store.dispatch(.todo(id: 1, action: .toggleLater))
        store.dispatch(.todo(id: 9, action: .toggle))
        #expect(await eventually { store.state.todos == [Todo(id: 1, done: true), Todo(id: 2, done: true)] })
    }

    @Test func explicitExtractIsUsedAsGiven() {
        let right = ActionCase<AppAction, CounterAction>(embed: AppAction.right) {
            if case .right(let action) = $0 { action } else { nil }
        }
        #expect(right.extract(.right(.incrementLater)) == .incrementLater)
        #expect(right.extract(.left(.incrementLater)) == nil)
    }

    struct Clock: Sendable {
        var now: @Sendable () -> Int
    }

    @Test func theEnvironmentReachesTheReducer() {
        let store = Store(initialState: 0, environment: Clock(now: { 42 })) { (state: inout Int, _: Void, clock) in
            state = clock.now()
            return .none
        }
        store.dispatch(())
        #expect(store.state == 42)
    }
}

/// `ActionCase(Parent.case)` extracts its case by reflection: also a case with one labelled payload, and one of two
/// cases that share a base name and a payload type.
@Suite("ActionCase: cases extracted by reflection")
struct ActionCaseReflectionTests {
    enum Child: Equatable, Sendable {
        case tap
    }

    enum Parent: Equatable, Sendable {
        case child(action: Child)
        case load(id: Int)
        case load(name: Int)
        case other
    }

    /// A case with one labelled payload, `case child(action: ChildAction)`, is as common a spelling as
    /// `case child(ChildAction)`. `Mirror` shows its payload as a one-element labelled tuple `(action: .tap)`, which
    /// does not cast to `Child`: the reflected `extract` never finds the case.
    @Test func actionCaseFindsALabelledSinglePayload() {
        let child = ActionCase(Parent.child(action:))
        #expect(child.extract(.child(action: .tap)) == .tap)
        #expect(child.extract(.other) == nil)
    }

    /// So a scoped child reducer on such a case silently never runs.
    @Test func scopeOnALabelledCaseRunsTheChild() {
        let counter = Reducer<Int, Child> { count, _ in count += 1 }
        let app = Reducer<Int, Parent>.scope(state: \.self, action: ActionCase(Parent.child(action:)), child: counter)
        let store = Store(initialState: 0, reducer: app)
        store.dispatch(.child(action: .tap))
        #expect(store.state == 1)
    }

    /// Two cases may share a base name (`load(id:)`, `load(name:)`) and a payload type: `Mirror` labels both
    /// `load`, so the name check cannot tell them apart. The case given must be found, the other not.
    @Test func actionCaseTellsCasesThatShareABaseName() {
        let byID = ActionCase(Parent.load(id:))
        #expect(byID.extract(.load(id: 5)) == 5)
        #expect(byID.extract(.load(name: 5)) == nil)
    }
}
