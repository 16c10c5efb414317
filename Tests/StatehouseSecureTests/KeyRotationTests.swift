import Foundation
import Statehouse
import StatehouseSecure
import Testing

@Suite("Key rotation", .serialized)
struct KeyRotationTests {
    @Test func valuesSealedWithAPreviousKeyOpenAndAreResealedWithTheNewOneWhenWritten() throws {
        let directory = TemporaryDirectory()
        let old = EncryptionKey.random(), new = EncryptionKey.random()
        try EncryptedStorage(directory: directory.url, key: old).save(Data("kept".utf8), key: "rotated")
        let rotating = EncryptedStorage(directory: directory.url, key: new, previousKeys: [old])
        #expect(try rotating.load(key: "rotated") == Data("kept".utf8))
        try rotating.save(Data("kept".utf8), key: "rotated")
        #expect(try EncryptedStorage(directory: directory.url, key: new).load(key: "rotated") == Data("kept".utf8))
        #expect(throws: StorageError.self) { try EncryptedStorage(directory: directory.url, key: old).load(key: "rotated") }
    }

    @Test func everyPreviousKeyIsTried() throws {
        let directory = TemporaryDirectory()
        let keys = (0..<4).map { _ in EncryptionKey.random() }
        for (index, key) in keys.enumerated() {
            try EncryptedStorage(directory: directory.url, key: key).save(Data("\(index)".utf8), key: "value.\(index)")
        }
        let rotating = EncryptedStorage(directory: directory.url, key: keys[3], previousKeys: [keys[0], keys[1], keys[2]])
        for index in 0..<4 {
            #expect(try rotating.load(key: "value.\(index)") == Data("\(index)".utf8))
        }
    }

    @Test func aContainerOnARotatedStorageLoadsTheOldValueAndReseals() throws {
        let directory = TemporaryDirectory()
        let old = EncryptionKey.random(), new = EncryptionKey.random()
        try EncryptedStorage(directory: directory.url, key: old).save(try JSONEncoder().encode("token"), key: "secure.rotated")
        do {
            let storage = EncryptedStorage(directory: directory.url, key: new, previousKeys: [old])
            let token = StateContainer("", key: "secure.rotated", storage: storage)
            #expect(token.value == "token")
            #expect(token.storageError?.value == nil)
            token.modify(token.value)  // writing the same value is enough to reseal it
            try token.flush()
        }
        let stored = try EncryptedStorage(directory: directory.url, key: new).load(key: "secure.rotated")
        #expect(try stored.map { try JSONDecoder().decode(String.self, from: $0) } == "token")
    }

    @Test func forgettingThePreviousKeyDestroysNothing() throws {
        let directory = TemporaryDirectory()
        let old = EncryptionKey.random(), new = EncryptionKey.random()
        try EncryptedStorage(directory: directory.url, key: old).save(Data("precious".utf8), key: "forgotten")
        let error = try #require(throws: StorageError.self) {
            try EncryptedStorage(directory: directory.url, key: new).load(key: "forgotten")
        }
        #expect(error.kind == .authenticationFailed)
        #expect(error.message.contains("previousKeys"))
        // Nothing wrote over it meanwhile: with the old key given back, the value is there again.
        let rotating = EncryptedStorage(directory: directory.url, key: new, previousKeys: [old])
        #expect(try rotating.load(key: "forgotten") == Data("precious".utf8))
    }
}
