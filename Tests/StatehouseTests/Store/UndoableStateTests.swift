import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A list whose changes do not commute, as the store's state: undoing one exactly needs the others applied again.
private struct Shelf: Codable, Equatable, Sendable {
    var books: [String] = []
}

private enum ShelfAction: Codable, Equatable, Sendable {
    /// A user's: undoable.
    case add(String)
    case removeLast
    /// A librarian's, from another process: never undone.
    case sortAndMark(String)

    var isUndoable: Bool {
        if case .sortAndMark = self { false } else { true }
    }
}

private let shelfReducer = Reducer<Shelf, ShelfAction> { shelf, action in
    switch action {
    case .add(let book): shelf.books.append(book)
    case .removeLast: _ = shelf.books.popLast()
    case .sortAndMark(let mark): shelf.books = shelf.books.sorted().map { $0.hasPrefix(mark) ? $0 : mark + $0 }
    }
}

private let policy = UndoPolicy<ShelfAction>(name: { action in
    if case .add(let book) = action { "Add \(book)" } else { nil }
}) { $0.isUndoable }

private typealias ShelfStore = Store<Undoable<Shelf, ShelfAction>, UndoableAction<ShelfAction>>

private func persistedShelf(in directory: TemporaryDirectory) -> ShelfStore {
    Store(
        initialState: Undoable(Shelf()), key: "shelf", storage: .file(directory: directory.url),
        externalChanges: .poll(every: .milliseconds(10)), reducer: shelfReducer.undoable(policy)
    )
}

/// A state that carries its undo history: saved with it, so it survives a restart, follows it to other processes,
/// and is changed by actions, as replicas need.
@Suite("Undo in the state: persisted, shared with other processes, undo and redo as actions", .serialized)
struct UndoableStateTests {
    @Test func undoAndRedoAreActionsOnTheState() {
        let store = Store(initialState: Undoable(Shelf()), reducer: shelfReducer.undoable(policy))
        store.dispatch(.action(.add("Dune")))
        store.dispatch(.group("Add two", [.add("Emma"), .sortAndMark("*"), .add("Ulysses")]))
        #expect(store.state.present.books == ["*Dune", "*Emma", "Ulysses"])
        #expect(store.undoAvailability == UndoAvailability(canUndo: true, undoName: "Add two"))
        store.undo()
        // The group's own actions are gone; the librarian's, inside it, stays.
        #expect(store.state.present.books == ["*Dune"])
        store.dispatch(.undo)
        #expect(store.state.present.books == [] && !store.canUndo && store.redoName == "Add Dune")
        store.redo()
        store.redo()
        #expect(store.state.present.books == ["*Dune", "*Emma", "Ulysses"] && !store.canRedo)
    }

    @Test func theHistoryIsSavedWithTheStateAndSurvivesARestart() throws {
        let directory = TemporaryDirectory()
        do {
            let store = persistedShelf(in: directory)
            store.dispatch(.action(.add("Dune")))
            store.dispatch(.action(.add("Emma")))
            store.undo()
            try store.flush()
        }
        let reopened = persistedShelf(in: directory)
        #expect(reopened.state.present.books == ["Dune"])
        #expect(reopened.canUndo && reopened.canRedo && reopened.redoName == "Add Emma")
        reopened.redo()
        #expect(reopened.state.present.books == ["Dune", "Emma"])
    }

    /// One store undoes its user's action after another store on the same storage changed the shelf: the other's
    /// change stays, and the other store sees the undo.
    @Test func undoKeepsAChangeAnotherStoreMadeThroughTheStorage() async throws {
        let directory = TemporaryDirectory()
        let mine = persistedShelf(in: directory)
        let theirs = persistedShelf(in: directory)
        mine.dispatch(.action(.add("Dune")))
        try mine.flush()
        #expect(await eventually { theirs.state == mine.state })
        theirs.dispatch(.action(.sortAndMark("*")))
        try theirs.flush()
        #expect(await eventually { mine.state == theirs.state })
        mine.undo()
        #expect(mine.state.present.books == [])
        try mine.flush()
        #expect(await eventually { theirs.state == mine.state })
        theirs.dispatch(.action(.add("Emma")))
        theirs.redo()  // nothing to redo: a new undoable action forgot it
        #expect(theirs.state.present.books == ["Emma"])
    }

    /// Two stores on one storage take turns at random: undoable and other actions, undo and redo, each store taking
    /// the other's state before it acts. Undoing everything leaves what the other actions alone make; redoing as
    /// much returns to the end.
    @Test(arguments: 0..<3) func undoingEverythingFromEitherStoreLeavesTheOtherActionsAlone(seed: UInt64) async throws {
        let directory = TemporaryDirectory()
        let stores = [persistedShelf(in: directory), persistedShelf(in: directory)]
        var random = SplitMix64(seed: seed)
        var others = Shelf()
        var applied: [ShelfAction] = []
        for step in 0..<60 {
            let store = stores[random.next(below: 2)]
            switch random.next(below: 8) {
            case 0: store.undo()
            case 1: store.redo()
            case 2:
                let action = ShelfAction.sortAndMark(step % 2 == 0 ? "*" : "+")
                store.dispatch(.action(action))
                applied.append(action)
            case 3:
                store.dispatch(.action(.removeLast))
            default:
                store.dispatch(.action(.add("b\(step)")))
            }
            try store.flush()
            let other = stores.first { $0 !== store }!
            #expect(await eventually { other.state == store.state }, "step \(step)")
        }
        for action in applied { _ = shelfReducer.reduce(&others, action) }
        let end = stores[0].state
        var undos = 0
        while stores[undos % 2].canUndo {
            stores[undos % 2].undo()
            try stores[undos % 2].flush()
            undos += 1
            #expect(await eventually { stores[undos % 2].state == stores[(undos + 1) % 2].state })
        }
        #expect(stores[0].state.present == others)
        for _ in 0..<undos { stores[1].redo() }
        #expect(stores[1].state == end)
    }

    @Test func theHistoryInTheStateStaysBounded() {
        let bounded = UndoPolicy<ShelfAction>(limit: 5, historyLimit: 50) { $0.isUndoable }
        let store = Store(initialState: Undoable(Shelf()), reducer: shelfReducer.undoable(bounded))
        for step in 0..<5_000 {
            store.dispatch(.action(step % 3 == 0 ? .add("b") : .sortAndMark("*")))
            store.dispatch(.action(.removeLast))
        }
        let (groups, actions) = store.state.history.footprint
        #expect(groups <= 5 && actions <= 50)
    }

    /// The stored form: the state and its history as JSON, the same on every machine (no clock readings in it).
    @Test func theHistoryEncodesAndDecodesToTheSameState() throws {
        let store = Store(initialState: Undoable(Shelf()), reducer: shelfReducer.undoable(policy))
        store.dispatch(.action(.add("Dune")))
        store.dispatch(.group(nil, [.add("Emma"), .removeLast]))
        store.undo()
        let data = try JSONEncoder().encode(store.state)
        let decoded = try JSONDecoder().decode(Undoable<Shelf, ShelfAction>.self, from: data)
        #expect(decoded == store.state)
        let action = try JSONDecoder().decode(UndoableAction<ShelfAction>.self, from: JSONEncoder().encode(UndoableAction<ShelfAction>.undo))
        #expect(action == .undo)
    }
}
