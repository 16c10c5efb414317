import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// `storageError` is the last storage failure, `nil` once a write succeeds, and a public `StateContainer` the app can
/// change (to show a failure of its own, or to dismiss one): a successful write clears what it shows, whoever set it.
@Suite("storageError: a value the app set, then a successful write")
struct StorageErrorSetByTheAppTests {
    private func appError(_ key: String) -> StorageError {
        StorageError(.io, key: key, operation: .save, message: "set by the app")
    }

    /// The documented promise: `nil` once a write succeeds, whoever set what it showed before.
    @Test func aSuccessfulWriteClearsAnErrorTheAppSet() throws {
        let storage = InMemoryStorage()
        let key = "storageError.app-set"
        let count = StateContainer(0, key: key, storage: storage, writes: .writeThrough, externalChanges: .ignore)
        let storageError = try #require(count.storageError)
        storageError.modify(appError(key))

        count.modify(1)
        try count.flush()

        #expect(storage.contents(of: key) == Data("1".utf8))
        #expect(storageError.value == nil, "still showing: \(String(describing: storageError.value?.message))")
    }

    /// Control: a failure persistence published itself is cleared by the next successful write.
    @Test func aSuccessfulWriteClearsAFailurePersistencePublished() throws {
        let storage = InMemoryStorage()
        let key = "storageError.own-failure"
        let count = StateContainer(0, key: key, storage: storage, writes: .writeThrough, externalChanges: .ignore)
        let storageError = try #require(count.storageError)
        storage.inject(.fail(), into: .save)
        count.modify(1)
        #expect(storageError.value != nil)

        count.modify(2)
        try count.flush()

        #expect(storageError.value == nil)
    }
}
