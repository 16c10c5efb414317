import Observation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A document whose changes do not commute: undoing one of them exactly needs the others applied again in order.
private struct Document: Equatable, Sendable {
    var text = ""
    var edits = 0
}

private enum Edit: Sendable, Equatable {
    /// A user's change: undoable.
    case type(String)
    case delete(Int)
    /// Someone else's change (a server, a timer): never undone.
    case stamp(String)
    case count

    var isUndoable: Bool {
        switch self {
        case .type, .delete: true
        case .stamp, .count: false
        }
    }

    var name: String? {
        switch self {
        case .type(let text): "Typing \(text)"
        case .delete: "Delete"
        case .stamp, .count: nil
        }
    }
}

private func edit(_ document: inout Document, _ action: Edit) {
    switch action {
    case .type(let text): document.text += text
    case .delete(let count): document.text.removeLast(min(count, document.text.count))
    case .stamp(let text): document.text = "[\(text)]" + document.text
    case .count: document.edits += 1
    }
}

private func makeStore(_ policy: UndoPolicy<Edit> = UndoPolicy(name: \.name) { $0.isUndoable }) -> Store<Document, Edit> {
    Store(initialState: Document(), reducer: edit, undo: policy)
}

@Suite("Undo and redo: selective, last in first out, bounded")
struct UndoTests {
    @Test func undoTakesBackTheNewestGroupAndRedoAppliesItAgain() {
        let store = makeStore()
        #expect(!store.canUndo && !store.canRedo)
        store.dispatch(.type("a"))
        store.dispatch(.type("b"))
        #expect(store.canUndo && store.undoName == "Typing b")
        store.undo()
        #expect(store.state.text == "a")
        #expect(store.canUndo && store.canRedo && store.undoName == "Typing a" && store.redoName == "Typing b")
        store.undo()
        #expect(store.state.text == "" && !store.canUndo)
        store.undo()  // nothing to undo: nothing happens
        #expect(store.state.text == "")
        store.redo()
        store.redo()
        #expect(store.state.text == "ab" && !store.canRedo)
        store.redo()
        #expect(store.state.text == "ab")
    }

    /// Undo never loses someone else's change: actions that are not undoable stay applied, in their place, when an
    /// earlier group is undone; redo puts the group back where it was.
    @Test func undoKeepsTheChangesThatCameAfterTheGroup() {
        let store = makeStore()
        store.dispatch(.type("hello"))
        store.dispatch(.stamp("server"))
        store.dispatch(.count)
        #expect(store.state == Document(text: "[server]hello", edits: 1))
        store.undo()
        #expect(store.state == Document(text: "[server]", edits: 1))
        store.redo()
        #expect(store.state == Document(text: "[server]hello", edits: 1))
        // An undoable action of someone else's after the group is undone first; the later stamp stays.
        store.dispatch(.delete(2))
        store.dispatch(.stamp("again"))
        store.undo()
        #expect(store.state.text == "[again][server]hello")
        store.undo()
        #expect(store.state.text == "[again][server]")
    }

    @Test func aNewUndoableActionForgetsWhatCouldBeRedone() {
        let store = makeStore()
        store.dispatch(.type("a"))
        store.dispatch(.type("b"))
        store.undo()
        store.dispatch(.stamp("s"))  // not undoable: the redo stays
        #expect(store.canRedo)
        store.dispatch(.type("c"))
        #expect(!store.canRedo)
        store.redo()
        #expect(store.state.text == "[s]ac")
        store.undo()
        store.undo()
        #expect(store.state.text == "[s]" && !store.canUndo)
    }

    @Test func anUndoGroupIsUndoneAtOnceAndNamedByItsCaller() {
        let store = makeStore()
        store.dispatch(.type("x"))
        store.undoGroup("Paste") {
            store.dispatch(.type("a"))
            store.dispatch(.stamp("s"))  // not undoable, not in the group, stays
            store.undoGroup {  // nested: joins
                store.dispatch(.type("b"))
            }
        }
        store.dispatch(.type("c"))
        #expect(store.undoName == "Typing c")
        store.undo()
        #expect(store.undoName == "Paste")
        store.undo()
        #expect(store.state.text == "[s]x")
        #expect(store.undoName == "Typing x")
        store.redo()
        #expect(store.state.text == "[s]xab")
    }

    @Test func aGroupWithoutAnActionLeavesNothingToUndo() {
        let store = makeStore()
        store.undoGroup("Nothing") { store.dispatch(.count) }
        #expect(!store.canUndo)
    }

    @Test func actionsCloseInTimeMakeOneGroup() {
        let typing = makeStore(UndoPolicy(grouping: .window(.seconds(3600)), name: \.name) { $0.isUndoable })
        for letter in ["a", "b", "c"] { typing.dispatch(.type(letter)) }
        typing.undo()
        #expect(typing.state.text == "" && typing.undoName == nil && typing.redoName == "Typing a")
        let apart = makeStore(UndoPolicy(grouping: .window(.zero)) { $0.isUndoable })
        for letter in ["a", "b", "c"] { apart.dispatch(.type(letter)) }
        apart.undo()
        #expect(apart.state.text == "ab")
        // After an undo a new action starts a group of its own, however close in time.
        typing.redo()
        typing.undo()
        typing.dispatch(.type("d"))
        typing.dispatch(.type("e"))
        typing.undo()
        #expect(typing.state.text == "")
    }

    @Test func theOldestGroupsAreForgottenPastTheLimits() {
        let store = makeStore(UndoPolicy(limit: 2) { $0.isUndoable })
        for letter in ["a", "b", "c"] { store.dispatch(.type(letter)) }
        store.undo()
        store.undo()
        #expect(store.state.text == "a" && !store.canUndo)
        let short = makeStore(UndoPolicy(historyLimit: 3) { $0.isUndoable })
        short.dispatch(.type("a"))
        short.dispatch(.type("b"))
        for _ in 0..<2 { short.dispatch(.count) }
        // Four actions from "a" on: "a" is forgotten, "b" (three actions) is kept.
        #expect(short.undoFootprint == (1, 3))
        short.undo()
        #expect(short.state == Document(text: "a", edits: 2) && !short.canUndo)
        let none = makeStore(UndoPolicy(limit: 0) { $0.isUndoable })
        none.dispatch(.type("a"))
        #expect(!none.canUndo && none.undoFootprint == (0, 0))
    }

    /// With nothing done, undone groups cannot be redone without the older ones they were made after: past the
    /// history's limit they all go.
    @Test func undoneGroupsGoTogetherPastTheHistoryLimit() {
        let store = makeStore(UndoPolicy(historyLimit: 4) { $0.isUndoable })
        store.dispatch(.type("a"))
        store.dispatch(.type("b"))
        store.undo()
        store.undo()
        for _ in 0..<3 { store.dispatch(.count) }
        #expect(!store.canRedo && store.undoFootprint == (0, 0))
        store.redo()
        #expect(store.state == Document(text: "", edits: 3))
    }

    /// Undo is not an action here: a recording starts again from the state it leaves, so that replaying the
    /// recording, or travelling to its end, still gives the store's state.
    @Test func aRecordingStillLeadsToTheStoresStateAfterAnUndo() throws {
        let store = makeStore()
        store.startRecording()
        store.dispatch(.type("a"))
        store.dispatch(.type("b"))
        store.undo()
        store.dispatch(.stamp("s"))
        let recording = try #require(store.recording)
        let replayed = Store(initialState: Document(), reducer: edit)
        try replayed.replay(recording)
        #expect(replayed.state == store.state)
        try store.travel(to: recording.actions.count)
        #expect(store.state.text == "[s]a")
    }

    /// A group that outgrows the history is forgotten whole, with its later actions: never undone in part.
    @Test func aGroupLargerThanTheHistoryIsNeverUndoneInPart() {
        let store = makeStore(UndoPolicy(historyLimit: 3, name: \.name) { $0.isUndoable })
        store.dispatch(.type("x"))
        store.undoGroup("Paste") { for letter in ["a", "b", "c", "d", "e"] { store.dispatch(.type(letter)) } }
        #expect(!store.canUndo)
        store.undo()
        #expect(store.state.text == "xabcde")
        store.dispatch(.type("f"))  // after the group: undoable again
        store.undo()
        #expect(store.state.text == "xabcde" && !store.canUndo)
        let typing = makeStore(UndoPolicy(grouping: .window(.seconds(3600)), historyLimit: 3) { $0.isUndoable })
        for letter in ["a", "b", "c", "d", "e"] { typing.dispatch(.type(letter)) }
        typing.undo()
        #expect(typing.state.text == "abcde" && !typing.canUndo)
    }

    /// With grouping by time, an action right after an undo group is not in that group.
    @Test func anUndoGroupEndsWithItsBody() {
        let store = makeStore(UndoPolicy(grouping: .window(.seconds(3600)), name: \.name) { $0.isUndoable })
        store.undoGroup("Paste") { store.dispatch(.type("pasted")) }
        store.dispatch(.type("x"))
        store.dispatch(.type("y"))
        #expect(store.undoName == "Typing x")
        store.undo()
        #expect(store.state.text == "pasted" && store.undoName == "Paste")
    }

    /// A state replaced whole (a replay, time travel) cannot be undone into: the history starts again.
    @Test func aReplacedStateStartsTheHistoryAgain() throws {
        let store = makeStore()
        store.startRecording()
        store.dispatch(.type("a"))
        store.dispatch(.type("b"))
        try store.travel(to: 1)
        #expect(!store.canUndo && store.state.text == "a")
        store.dispatch(.type("c"))
        let recording = try #require(store.stopRecording())
        try store.replay(recording)
        #expect(!store.canUndo)
    }

    @Test func aStoreWithoutAPolicyOrAScopedStoreHasNothingToUndo() {
        let plain = Store(initialState: Document(), reducer: edit)
        plain.dispatch(.type("a"))
        plain.undo()
        #expect(plain.state.text == "a" && !plain.canUndo)
        #expect(plain.undoGroup("Nothing") { 42 } == 42)
        let store = makeStore()
        store.dispatch(.type("a"))
        let scoped = store.scope(state: \.text, action: { (text: String) in Edit.type(text) })
        scoped.undo()
        #expect(!scoped.canUndo && store.state.text == "a")
    }

    /// Effects' follow-up actions are recorded as any other; applied again, reducers' effects do not run twice.
    @Test func applyingActionsAgainRunsNoEffect() async {
        let effects = Atomic<Int>(0)
        let store = Store(
            initialState: Document(),
            reducer: { (document: inout Document, action: Edit) -> Effect<Edit> in
                edit(&document, action)
                guard case .type = action else { return .none }
                return .run { _ in effects.add(1, ordering: .relaxed) }
            },
            undo: UndoPolicy { $0.isUndoable }
        )
        store.dispatch(.type("a"))
        store.dispatch(.count)
        #expect(await eventually { effects.load(ordering: .relaxed) == 1 })
        store.undo()
        store.redo()
        #expect(store.state == Document(text: "a", edits: 1))
        await store.finishEffects()
        let ran = effects.load(ordering: .relaxed)
        #expect(ran == 1)
    }

    @Test func undoAndRedoAreObservableAndFollowedAsValues() async {
        let store = makeStore()
        let changed = Atomic<Bool>(false)
        withObservationTracking { _ = store.canUndo } onChange: { changed.store(true, ordering: .relaxed) }
        store.dispatch(.type("a"))
        let reported = changed.load(ordering: .relaxed)
        #expect(reported)
        var values = store.undoAvailabilityValues().makeAsyncIterator()
        #expect(await values.next() == UndoAvailability(canUndo: true, undoName: "Typing a"))
        store.dispatch(.count)  // the same availability: not repeated
        store.undo()
        #expect(await values.next() == UndoAvailability(canRedo: true, redoName: "Typing a"))
    }

    /// Random undoable and other actions from several threads, with undo and redo among them: undoing everything
    /// leaves what the other actions alone make, in the order the store applied them (which a middleware, seeing
    /// each action just before the reducer, notes); redoing everything returns to the state before the undos.
    @Test(arguments: 0..<4) func undoingEverythingLeavesWhatTheOtherActionsAloneMake(seed: UInt64) async throws {
        let applied = Recorder<Edit>()
        let noting = Middleware<Document, Edit> { _, action, next in
            if !action.isUndoable { applied.append(action) }
            next(action)
        }
        let store = Store(
            initialState: Document(), reducer: edit, middleware: [noting],
            undo: UndoPolicy(limit: 100_000, historyLimit: 100_000) { $0.isUndoable }
        )
        let perThread = isUnderThreadSanitizer ? 150 : 600
        await onNewThreads(3) { thread in
            var random = SplitMix64(seed: seed &* 31 &+ UInt64(thread))
            for step in 0..<perThread {
                switch random.next(below: 10) {
                case 0: store.undo()
                case 1: store.redo()
                case 2, 3: store.dispatch(.stamp("\(thread).\(step)"))
                case 4: store.dispatch(.count)
                case 5: store.dispatch(.delete(random.next(below: 3)))
                default: store.dispatch(.type("\(thread)"))
                }
            }
        }
        await store.finishEffects()
        let end = store.state
        let couldRedo = store.canRedo  // the threads' last undos
        var undos = 0
        while store.canUndo {
            store.undo()
            undos += 1
        }
        var others = Document()
        for action in applied.elements { edit(&others, action) }
        #expect(store.state == others)
        for _ in 0..<undos { store.redo() }
        #expect(store.state == end)
        #expect(store.canRedo == couldRedo)
    }

    /// 100,000 actions keep the history within its limits.
    @Test func theHistoryStaysBoundedOverManyActions() {
        let store = makeStore(UndoPolicy(limit: 50, historyLimit: 1_000) { $0.isUndoable })
        var random = SplitMix64(seed: 7)
        for step in 0..<100_000 {
            store.dispatch(random.next(below: 3) == 0 ? .type("x") : .count)
            if step % 1_000 == 999 {
                let (groups, actions) = store.undoFootprint
                #expect(groups <= 50 && actions <= 1_000)
            }
        }
    }
}
