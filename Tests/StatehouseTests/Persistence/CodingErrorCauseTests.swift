import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// Decoding it from a string quotes the string: "Cannot initialize Plan from invalid String value …".
private enum Plan: String, Codable, Sendable {
    case free, paid
}

private struct Profile: Codable, Equatable, Sendable {
    var scores: [String: Int] = [:]
}

private func secret() -> String {
    "secret-\(UInt64.random(in: 0...UInt64.max))"
}

/// Foundation's coding errors carry the value or quote the data: a `StorageError` keeps none of that, in its message
/// or in its cause.
@Suite("Coding errors kept as causes carry no value")
struct CodingErrorCauseTests {
    @Test func aValueThatDoesNotEncodeIsNotInTheCause() throws {
        let hidden = secret()
        let vault = StateContainer(Vault(), key: "cause.encode", storage: MemoryStorage())
        vault.modify(Vault(secret: hidden))
        let error = try #require(throws: StorageError.self) { try vault.flush() }
        #expect(error.kind == .unencodable)
        let failure = try #require(error.cause as? StorageError.CodingFailure)
        #expect(failure.description == "the encoder refused a value of type String")
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    @Test func storedDataThatDoesNotDecodeIsNotInTheCause() throws {
        let hidden = secret()
        let storage = MemoryStorage()
        try storage.save(Data("\"\(hidden)\"".utf8), key: "cause.decode")
        let plan = StateContainer(Plan.free, key: "cause.decode", storage: storage)
        let error = try #require(plan.storageError?.value)
        #expect(error.kind == .undecodable)
        #expect(error.cause is StorageError.CodingFailure)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    @Test func aDictionaryKeyReadFromTheDataIsNotInThePath() throws {
        let hidden = secret()
        let storage = MemoryStorage()
        try storage.save(Data(#"{"scores": {"\#(hidden)": "ten"}}"#.utf8), key: "cause.path")
        let profile = StateContainer(Profile(), key: "cause.path", storage: storage)
        let error = try #require(profile.storageError?.value)
        let failure = try #require(error.cause as? StorageError.CodingFailure)
        #expect(failure.description == "a Int was expected where the data holds something else, at scores.*")
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    @Test func arrayIndicesAndDeclaredKeysStayInThePath() {
        struct Team: Decodable { var members: [Member] }
        struct Member: Decodable { var age: Int }
        #expect { _ = try JSONDecoder().decode(Team.self, from: Data(#"{"members": [{"age": 1}, {}]}"#.utf8)) }
            throws: { error in
                StorageError.CodingFailure(error).description == #"the key "age" is missing, at members[1]"#
            }
    }

    @Test func anOutsideValueThatDoesNotDecodeIsNotInTheCause() async throws {
        let hidden = secret()
        let storage = InMemoryStorage().withoutNotifications
        let plan = StateContainer(
            Plan.free, key: "cause.outside", storage: storage, codec: .json, writes: .writeThrough,
            externalChanges: .poll(every: .milliseconds(5)), clock: ContinuousClock()
        )
        try storage.save(Data("\"\(hidden)\"".utf8), key: "cause.outside")
        let errors = try #require(plan.storageError)
        #expect(await eventually { errors.value?.kind == .undecodable })
        let error = try #require(errors.value)
        #expect(error.cause is StorageError.CodingFailure)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    @Test func aStorageOfYourOwnThatThrowsACodingErrorKeepsNoValue() throws {
        let hidden = secret()
        let error = try #require(throws: StorageError.self) {
            try StorageError.catching(key: "cause.catching", operation: .save) {
                throw EncodingError.invalidValue(hidden, .init(codingPath: [], debugDescription: hidden))
            }
        }
        #expect(error.cause is StorageError.CodingFailure)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
        let built = StorageError(.io, key: nil, message: "Failed.", cause: DecodingError.dataCorrupted(
            .init(codingPath: [], debugDescription: "Bad: \(hidden)")
        ))
        for text in built.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    @Test func otherErrorsAreKeptAsTheyAre() {
        let error = StorageError(.io, key: nil, message: "Failed.", cause: CocoaError(.fileReadNoPermission))
        #expect(error.cause is CocoaError)
    }
}
