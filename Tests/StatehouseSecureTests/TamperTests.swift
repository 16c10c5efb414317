import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ways the sealed bytes of a key can go wrong, each made on disk as an attacker or an accident would.
enum Tamper: String, CaseIterable, Sendable {
    case flipFormatByte, newerFormat, flipNonceByte, flipCiphertextByte, flipTagByte, truncate, emptyFile
    case swapWithAnotherKeysFile, wrongEncryptionKey

    /// Seals `secret` under `key` in `directory`, then spoils it. Returns the storage to open it with (the honest
    /// one, or one with another encryption key) and the bytes now in the key's file.
    func spoil(_ key: String, holding secret: String, in directory: TemporaryDirectory) throws -> (EncryptedStorage, Data) {
        let encryptionKey = EncryptionKey.random()
        let honest = EncryptedStorage(directory: directory.url, key: encryptionKey)
        try honest.save(try JSONEncoder().encode(secret), key: key)
        let file = directory.file(of: key)
        let sealed = try Data(contentsOf: file)
        let spoiled: Data
        switch self {
        case .flipFormatByte: spoiled = sealed.flipping(at: 0)
        case .newerFormat: spoiled = Data([2]) + sealed.dropFirst()
        case .flipNonceByte: spoiled = sealed.flipping(at: 5)
        case .flipCiphertextByte: spoiled = sealed.flipping(at: 13)
        case .flipTagByte: spoiled = sealed.flipping(at: sealed.count - 1)
        case .truncate: spoiled = sealed.prefix(sealed.count - 1)
        case .emptyFile: spoiled = Data()
        case .swapWithAnotherKeysFile:
            // A valid value, sealed with the same encryption key, but for another key.
            try honest.save(try JSONEncoder().encode("another \(secret)"), key: "\(key).neighbour")
            spoiled = try Data(contentsOf: directory.file(of: "\(key).neighbour"))
            try sealed.write(to: directory.file(of: "\(key).neighbour"))
        case .wrongEncryptionKey:
            return (EncryptedStorage(directory: directory.url, key: .random()), sealed)
        }
        try spoiled.write(to: file)
        return (honest, spoiled)
    }
}

@Suite("Tampered sealed data", .serialized)
struct TamperTests {
    @Test(arguments: Tamper.allCases)
    func loadingIsAnAuthenticationFailureThatKeepsTheBytesAside(tamper: Tamper) throws {
        let directory = TemporaryDirectory()
        let secret = uniqueSecret()
        let (storage, spoiled) = try tamper.spoil("victim", holding: secret, in: directory)
        let error = try #require(throws: StorageError.self) { try storage.load(key: "victim") }
        #expect(error.kind == .authenticationFailed)
        #expect(error.key == "victim")
        #expect(error.operation == .load)
        #expect(error.cause != nil)
        let aside = try #require(error.keptAside)
        #expect(aside.hasPrefix("victim.unauthentic."))
        #expect(error.message.contains(aside))
        #expect(!"\(error)".contains(secret) && !"\(error.cause!)".contains(secret))
        // Kept byte for byte, and the key's own file is left as it was.
        #expect(try FileStorage(directory: directory.url).load(key: aside) == spoiled)
        #expect(try Data(contentsOf: directory.file(of: "victim")) == spoiled)
        // Loading the same bytes again keeps no second copy.
        let names = directory.names
        #expect(try #require(throws: StorageError.self) { try storage.load(key: "victim") }.keptAside == aside)
        #expect(directory.names.sorted() == names.sorted())
    }

    @Test(arguments: Tamper.allCases)
    func aContainerStartsFromItsDefaultReportsItAndStillWrites(tamper: Tamper) throws {
        let directory = TemporaryDirectory()
        let key = "secure.tamper.\(tamper.rawValue)"
        let (storage, spoiled) = try tamper.spoil(key, holding: uniqueSecret(), in: directory)
        // A long window, so that `flush()` makes the write and reports it: a write the window ends in the meantime
        // reports on another thread, after the check below.
        let container = StateContainer("default", key: key, storage: storage, writes: .coalesced(window: .seconds(60)))
        #expect(container.value == "default")
        let error = try #require(container.storageError?.value)
        #expect(error.kind == .authenticationFailed)
        let aside = try #require(error.keptAside)
        container.modify("rewritten")
        try container.flush()
        #expect(container.storageError?.value == nil)
        #expect(try storage.load(key: key) == JSONEncoder().encode("rewritten"))
        #expect(try FileStorage(directory: directory.url).load(key: aside) == spoiled)
    }

    @Test func differentBadBytesAreKeptApart() throws {
        let directory = TemporaryDirectory()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        try storage.save(Data("v".utf8), key: "twice")
        let sealed = try Data(contentsOf: directory.file(of: "twice"))
        var asides: [String] = []
        for index in [3, 4] {
            try sealed.flipping(at: index).write(to: directory.file(of: "twice"))
            let error = try #require(throws: StorageError.self) { try storage.load(key: "twice") }
            asides.append(try #require(error.keptAside))
        }
        #expect(Set(asides).count == 2)
        #expect(try FileStorage(directory: directory.url).load(key: asides[0]) == sealed.flipping(at: 3))
        #expect(try FileStorage(directory: directory.url).load(key: asides[1]) == sealed.flipping(at: 4))
    }

    @Test func bytesThatCannotBeKeptAsideAreNeverWrittenOver() throws {
        let directory = TemporaryDirectory()
        let key = "secure.tamper.stuck"
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        try storage.save(Data("1".utf8), key: key)
        let spoiled = try Data(contentsOf: directory.file(of: key)).flipping(at: 20)
        try spoiled.write(to: directory.file(of: key))
        // Find where the bytes go, then make that place unusable: a folder with something in it.
        let aside = try #require(try #require(throws: StorageError.self) { try storage.load(key: key) }.keptAside)
        let asideFile = directory.file(of: aside)
        try FileManager.default.removeItem(at: asideFile)
        try FileManager.default.createDirectory(at: asideFile.appendingPathComponent("occupied"), withIntermediateDirectories: true)

        let error = try #require(throws: StorageError.self) { try storage.load(key: key) }
        #expect(error.kind == .authenticationFailed)
        #expect(error.keptAside == nil)
        #expect(error.message.contains("could not be kept aside"))
        let container = StateContainer(0, key: key, storage: storage)
        #expect(container.value == 0)
        #expect(container.storageError?.value != nil)
        container.modify(5)
        #expect(throws: StorageError.self) { try container.flush() }
        #expect(try Data(contentsOf: directory.file(of: key)) == spoiled)
    }
}

/// A named pipe where a sealed value's file should be: reading it would wait for a writer that never comes.
@Suite("Sealed files that are not files", .serialized)
struct SealedFileNotAFileTests {
    @Test func aNamedPipeInPlaceOfASealedValueIsAnErrorAndTheContainerStartsFromItsDefault() async throws {
        let directory = TemporaryDirectory()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        try storage.save(Data("1".utf8), key: "secure.pipe")
        let file = directory.file(of: "secure.pipe")
        try FileManager.default.removeItem(at: file)
        #expect(mkfifo(file.path, 0o600) == 0)
        let outcome = Locked<(value: Int, error: StorageError?)?>(nil)
        Thread.detachNewThread {
            let container = StateContainer(0, key: "secure.pipe", storage: storage, externalChanges: .ignore)
            outcome.withLock { $0 = (container.value, container.storageError?.value) }
        }
        let returned = await eventually { outcome.withLock { $0 != nil } }
        if !returned {
            let writer = open(file.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        #expect(returned, "the container is still waiting on the named pipe")
        let (value, error) = try #require(outcome.withLock { $0 })
        #expect(value == 0)
        #expect(error?.kind == .io)
        #expect(error?.message.contains("not a regular file") == true, "\(String(describing: error))")
        // Left as it was: nothing was written over it.
        var info = stat()
        #expect(lstat(file.path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
    }
}
