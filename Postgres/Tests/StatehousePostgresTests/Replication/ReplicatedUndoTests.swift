import Foundation
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// Entries a user adds and can undo, and stamps a server makes that are never undone.
private struct Notes: Codable, Equatable, Sendable {
    var entries: [String] = []
    var stamps = 0
}

private enum NotesAction: Codable, Equatable, Sendable {
    case add(String)
    case stamp
}

private let notesReducer = Reducer<Notes, NotesAction> { notes, action in
    switch action {
    case .add(let entry): notes.entries.append(entry)
    case .stamp: notes.stamps += 1
    }
}.undoable(UndoPolicy { $0 != .stamp })

/// On replicated stores of `Undoable` state, undo and redo are actions in the log: every replica applies them alike.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct ReplicatedUndoTests {
    @Test func anUndoOnOneReplicaIsAppliedByEveryReplicaKeepingTheOthersChanges() async throws {
        try await withClient { client in
            let log = uniqueTable()
            let replicas = try (0..<2).map { _ in
                try ReplicatedStore(client: client, log: log, initialState: Undoable(Notes()), reducer: notesReducer.reduce)
            }
            try await whileRunning(replicas) {
                try await replicas[0].send(.action(.add("draft")))
                try await replicas[1].send(.action(.stamp))
                #expect(await eventually { replicas.allSatisfy { $0.appliedSequence >= 2 } })
                replicas[0].store.undo()
                #expect(await eventually {
                    replicas.allSatisfy { $0.state.present == Notes(entries: [], stamps: 1) && $0.state.undoAvailability.canRedo }
                })
                replicas[1].store.redo()
                #expect(await eventually { replicas.allSatisfy { $0.state.present == Notes(entries: ["draft"], stamps: 1) } })
                #expect(replicas[0].state == replicas[1].state)
            }
        }
    }
}
