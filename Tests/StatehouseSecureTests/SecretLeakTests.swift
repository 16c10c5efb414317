import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import Testing

/// A type whose decoding failure quotes the stored text: Foundation's message for a raw value it does not know
/// ("Cannot initialize Plan from invalid String value …").
private enum Plan: String, Codable, Sendable {
    case free, paid
}

/// A value that opens but does not decode (the type changed) must not carry its plaintext into the error.
@Suite("Secrets stay out of errors", .serialized)
struct SecretLeakTests {
    @Test func aStoredSecretThatNoLongerDecodesIsNotQuotedInTheError() throws {
        let directory = TemporaryDirectory()
        let secret = uniqueSecret()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        try storage.save(try JSONEncoder().encode(secret), key: "secure.leak.load")
        let container = StateContainer(Plan.free, key: "secure.leak.load", storage: storage)
        #expect(container.value == .free)
        let error = try #require(container.storageError?.value)
        #expect(error.kind == .undecodable)
        #expect(!error.everyText.contains { $0.contains(secret) }, "the error quotes the stored value")
        #expect(error.message.contains("Plan"))
        // Kept aside, still sealed.
        #expect(error.keptAside != nil)
        #expect(try !directory.anyFileContains(secret))
    }

    @Test func aSecretThatCannotBeEncodedIsNotQuotedInTheError() throws {
        let directory = TemporaryDirectory()
        let secret = uniqueSecret()
        let vault = StateContainer(
            Vault(), key: "secure.leak.encode", storage: EncryptedStorage(directory: directory.url, key: .random())
        )
        vault.modify(Vault(secret: secret))
        let error = try #require(throws: StorageError.self) { try vault.flush() }
        #expect(error.kind == .unencodable)
        #expect(!error.everyText.contains { $0.contains(secret) }, "the error quotes the value")
        #expect(error.message.contains("String"))
        #expect(try !directory.anyFileContains(secret))
    }

    @Test func aSecretAnotherWriterStoresThatDoesNotDecodeIsNotQuotedInTheError() async throws {
        let directory = TemporaryDirectory()
        let key = EncryptionKey.random()
        let secret = uniqueSecret()
        let container = StateContainer(
            Plan.free, key: "secure.leak.outside", storage: EncryptedStorage(directory: directory.url, key: key),
            externalChanges: .poll(every: .milliseconds(5))
        )
        let other = EncryptedStorage(directory: directory.url, key: key)
        try other.save(try JSONEncoder().encode(secret), key: "secure.leak.outside")
        #expect(await eventually { container.storageError?.value != nil })
        let error = try #require(container.storageError?.value)
        #expect(error.kind == .undecodable)
        #expect(!error.everyText.contains { $0.contains(secret) }, "the error quotes the stored value")
        #expect(try !directory.anyFileContains(secret))
    }
}
