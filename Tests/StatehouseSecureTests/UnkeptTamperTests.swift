import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import Testing

/// Sealed bytes another process stores that fail their authentication, and that cannot be kept aside: no write of
/// this process replaces them until they are.
@Suite("Tampered sealed data that cannot be kept aside", .serialized)
struct UnkeptTamperTests {
    @Test func isNeverWrittenOverAndIsKeptAsideBeforeTheNextWrite() async throws {
        let directory = TemporaryDirectory()
        let key = EncryptionKey.random()
        let name = "secure.unkept"
        let other = EncryptedStorage(directory: directory.url, key: key)
        let token = StateContainer<String?>(
            nil, key: name, storage: EncryptedStorage(directory: directory.url, key: key), writes: .writeThrough,
            externalChanges: .poll(every: .milliseconds(5))
        )
        let errors = try #require(token.storageError)
        let file = directory.file(of: name)

        // Tampered bytes, kept aside: that names the place these very bytes are kept in.
        try other.save(Data(#""one""#.utf8), key: name)
        let tampered = try Data(contentsOf: file).flipping(at: 20)
        try tampered.write(to: file)
        #expect(await eventually { errors.value?.kind == .authenticationFailed })
        let aside = try #require(errors.value?.keptAside)
        try other.save(Data(#""two""#.utf8), key: name)
        #expect(await eventually { token.value == "two" })

        // The same bytes again, their place taken by a directory: they can no longer be kept aside.
        let asideFile = directory.file(of: aside)
        try FileManager.default.removeItem(at: asideFile)
        try FileManager.default.createDirectory(at: asideFile, withIntermediateDirectories: false)
        try tampered.write(to: file)
        #expect(await eventually { errors.value?.kind == .authenticationFailed && errors.value?.keptAside == nil })

        token.modify("three")
        #expect(try Data(contentsOf: file) == tampered)
        let refused = try #require(throws: StorageError.self) { try token.flush() }
        #expect(refused.kind == .authenticationFailed && refused.keptAside == nil)
        #expect(try Data(contentsOf: file) == tampered)

        // Room again: the next write keeps the bytes aside, then writes.
        try FileManager.default.removeItem(at: asideFile)
        try token.flush()
        #expect(try other.load(key: name) == Data(#""three""#.utf8))
        #expect(try Data(contentsOf: asideFile) == tampered)
        #expect(errors.value == nil)
    }
}
