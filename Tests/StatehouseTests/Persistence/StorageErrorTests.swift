import Foundation
import Testing
@testable import Statehouse

/// A value whose encoding always fails.
private struct Unencodable: Codable, Equatable, Sendable {
    struct Refused: Error, CustomStringConvertible {
        var description: String { "this value refuses to be encoded" }
    }

    var number = 0

    init(number: Int = 0) {
        self.number = number
    }

    init(from decoder: any Decoder) throws {
        number = try decoder.singleValueContainer().decode(Int.self)
    }

    func encode(to encoder: any Encoder) throws {
        throw Refused()
    }
}

@Suite("Storage errors: typed, with the key, the operation and the cause", .serialized)
struct StorageErrorTests {
    /// A file storage whose directory is a regular file: every operation fails in the file system.
    static func storageInsideAFile() throws -> (FileStorage, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let file = directory.url.appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: file)
        return (FileStorage(directory: file), directory)
    }

    static func check(
        _ error: any Error, kind: StorageError.Kind, key: String, operation: StorageError.Operation,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = error as? StorageError else {
            Issue.record("threw \(type(of: error)), not a StorageError: \(error)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.kind == kind, sourceLocation: sourceLocation)
        #expect(error.key == key, sourceLocation: sourceLocation)
        #expect(error.operation == operation, sourceLocation: sourceLocation)
        #expect(error.cause != nil, "the underlying error was dropped", sourceLocation: sourceLocation)
    }

    @Test func fileStorageThrowsStorageErrorsForEveryOperation() throws {
        let (storage, directory) = try Self.storageInsideAFile()
        defer { withExtendedLifetime(directory) {} }
        #expect { _ = try storage.load(key: "k") } throws: { error in
            Self.check(error, kind: .io, key: "k", operation: .load)
            return true
        }
        #expect { try storage.save(Data(), key: "k") } throws: { error in
            Self.check(error, kind: .io, key: "k", operation: .save)
            return true
        }
        #expect { _ = try storage.fingerprint(key: "k") } throws: { error in
            Self.check(error, kind: .io, key: "k", operation: .fingerprint)
            return true
        }
    }

    @Test func theMessageNamesTheKeyTheOperationAndTheSystemsReason() throws {
        let (storage, directory) = try Self.storageInsideAFile()
        defer { withExtendedLifetime(directory) {} }
        #expect { try storage.save(Data(), key: "settings") } throws: { error in
            let message = "\(error)"
            return message.contains("save \"settings\"") && message.contains("not-a-directory")
        }
    }

    @Test func aContainerOnAStorageItCannotReadSaysWhyAndDoesNotWrite() throws {
        let (storage, directory) = try Self.storageInsideAFile()
        defer { withExtendedLifetime(directory) {} }
        let count = StateContainer(3, key: "errors.unreadable", storage: storage)
        #expect(count.value == 3)
        let error = try #require(count.storageError?.value)
        #expect(error.kind == .io && error.operation == .load && error.cause != nil)
        count.modify(4)
        #expect(throws: StorageError.self) { try count.flush() }
    }

    @Test func aLoadErrorKeepsTheStoragesKindAndStopsWrites() throws {
        struct Unauthentic: StateStorage {
            func load(key: String) throws -> Data? {
                throw StorageError(.authenticationFailed, key: key, operation: .load, message: "The seal is broken.")
            }
            func save(_ data: Data, key: String) throws {}
            func remove(key: String) throws {}
        }
        let secret = StateContainer("default", key: "errors.unauthentic", storage: Unauthentic())
        let error = try #require(secret.storageError?.value)
        #expect(error.kind == .authenticationFailed && error.operation == .load)
        #expect(error.message.contains("The seal is broken.") && error.message.contains("will not write"))
        secret.modify("new")
        #expect(throws: StorageError.self) { try secret.flush() }
    }

    @Test func aValueThatCannotBeEncodedIsAnUnencodableError() throws {
        let storage = MemoryStorage()
        let value = StateContainer(Unencodable(), key: "errors.unencodable", storage: storage)
        value.modify(Unencodable(number: 1))
        #expect { try value.flush() } throws: { error in
            Self.check(error, kind: .unencodable, key: "errors.unencodable", operation: .encode)
            return "\(error)".contains("refuses to be encoded")
        }
        #expect(value.storageError?.value?.kind == .unencodable)
        #expect(value.value == Unencodable(number: 1), "the value in memory stays")
    }

    @Test func catchingKeepsStorageErrorsAndWrapsOthers() throws {
        let original = StorageError(.authenticationFailed, key: "a", operation: .load, message: "tampered")
        #expect(throws: original) { try StorageError.catching(key: "b", operation: .save) { throw original } }
        struct Low: Error {}
        #expect { try StorageError.catching(key: "b", operation: .remove, in: "/somewhere") { throw Low() } } throws: {
            Self.check($0, kind: .io, key: "b", operation: .remove)
            return "\($0)".contains("/somewhere")
        }
        #expect(try StorageError.catching(key: nil, operation: .load) { 7 } == 7)
    }
}
