import Foundation
import StatehouseTestSupport
import Testing
@testable import Statehouse

private struct Login: Codable, Equatable, Sendable {
    var user: String
}

private enum LoginAction: Sendable {
    case signIn(String)
    case signOut
}

private func loginReducer(_ login: inout Login?, _ action: LoginAction) {
    switch action {
    case .signIn(let user): login = Login(user: user)
    case .signOut: login = nil
    }
}

/// A persisted store has what a persisted container has: versioned state, optional state removal, undecodable bytes
/// kept aside, and a migration followed.
@Suite("Persisted stores, like persisted containers", .serialized)
struct PersistedStoreParityTests {
    static let blank = VisitorProfile(fullName: "", visits: 0)

    static func text(_ storage: some StateStorage, _ key: String) throws -> String? {
        try storage.load(key: key).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test(arguments: [
        (#"{"name":"Ada"}"#, 0),
        (#"{"value":{"name":"Ada"},"version":1}"#, 0),
        (#"{"value":{"name":"Ada","visits":4},"version":2}"#, 4),
    ])
    func anOlderVersionIsMigratedWhenTheStoreLoadsIt(stored: String, visits: Int) throws {
        let storage = MemoryStorage()
        try storage.save(Data(stored.utf8), key: "parity.migrate")
        let store = Store(initialState: Self.blank, key: "parity.migrate", storage: storage, reducer: visitorReducer)
        #expect(store.state == VisitorProfile(fullName: "Ada", visits: visits))
        #expect(store.storageError?.value == nil)
        store.dispatch(.visit)
        try store.flush()
        #expect(try Self.text(storage, "parity.migrate") == #"{"value":{"fullName":"Ada","visits":\#(visits + 1)},"version":3}"#)
    }

    @Test func aNewerVersionIsKeptAsideAndTheStoreStartsFromItsInitialState() throws {
        let storage = MemoryStorage()
        let newer = #"{"value":{"fullName":"Ada","visits":1,"badge":"gold"},"version":4}"#
        try storage.save(Data(newer.utf8), key: "parity.newer")
        let store = Store(initialState: Self.blank, key: "parity.newer", storage: storage, reducer: visitorReducer)
        #expect(store.state == Self.blank)
        let error = try #require(store.storageError?.value)
        #expect(error.kind == .undecodable && error.message.contains("written by version 4"))
        let aside = try #require(error.keptAside)
        #expect(try Self.text(storage, aside) == newer)
        store.dispatch(.visit)
        try store.flush()
        #expect(try Self.text(storage, aside) == newer, "the kept bytes were overwritten")
    }

    @Test func undecodableBytesAreKeptAsideForAStore() throws {
        let storage = MemoryStorage()
        try storage.save(Data("not json".utf8), key: "parity.corrupt")
        let store = Store(initialState: Counter(), key: "parity.corrupt", storage: storage, reducer: counterReducer)
        #expect(store.state == Counter())
        let aside = try #require(store.storageError?.value?.keptAside)
        #expect(try Self.text(storage, aside) == "not json")
    }

    @Test func anOptionalStateThatBecomesNilRemovesTheEntry() throws {
        let storage = MemoryStorage()
        let store = Store(initialState: Login?.none, key: "parity.login", storage: storage, reducer: loginReducer)
        store.dispatch(.signIn("ada"))
        try store.flush()
        #expect(try Self.text(storage, "parity.login") == #"{"user":"ada"}"#)
        store.dispatch(.signOut)
        try store.flush()
        #expect(try storage.load(key: "parity.login") == nil, "nil was stored instead of removing the entry")
    }

    @Test func aStoreFollowsWhatOthersStoreInAnyVersion() async throws {
        let directory = TemporaryDirectory()
        let store = Store(
            initialState: Self.blank, key: "parity.follow", storage: FileStorage(directory: directory.url),
            externalChanges: .poll(every: .milliseconds(10)), reducer: visitorReducer
        )
        let seen = Recorder<VisitorProfile>()
        let token = store.subscribe { seen.append($0) }
        let other = FileStorage(directory: directory.url)  // another process's storage on the same directory
        try other.save(Data(#"{"value":{"name":"Ada","visits":2},"version":2}"#.utf8), key: "parity.follow")
        #expect(await eventually { store.state == VisitorProfile(fullName: "Ada", visits: 2) })
        try other.save(Data(#"{"value":{"fullName":"Grace","visits":5},"version":3}"#.utf8), key: "parity.follow")
        #expect(await eventually { store.state == VisitorProfile(fullName: "Grace", visits: 5) })
        // Taken from storage, not written back: the other side's bytes stay as they were.
        try store.flush()
        #expect(try Self.text(other, "parity.follow") == #"{"value":{"fullName":"Grace","visits":5},"version":3}"#)
        #expect(await eventually { seen.elements.last == VisitorProfile(fullName: "Grace", visits: 5) })
        token.cancel()
    }
}
