import Foundation
import Testing
@testable import Statehouse

@Suite("UserDefaults storage", .serialized)
struct UserDefaultsStorageTests {
    let directory = TemporaryDirectory()
    var storage: UserDefaultsStorage {
        UserDefaultsStorage(suiteName: "statehouse.tests.\(directory.url.lastPathComponent)")
    }

    static let precomposed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test func keysSwiftCallsEqualAreOneEntryWhicheverFormSavesLoadsOrRemoves() throws {
        let storage = storage
        try storage.save(Data("decomposed".utf8), key: Self.decomposed)
        #expect(try storage.load(key: Self.precomposed) == Data("decomposed".utf8))
        try storage.save(Data("precomposed".utf8), key: Self.precomposed)
        #expect(try storage.load(key: Self.decomposed) == Data("precomposed".utf8))
        try storage.remove(key: Self.decomposed)
        #expect(try storage.load(key: Self.precomposed) == nil)
        #expect(storage.defaults.object(forKey: Self.precomposed) == nil)
        #expect(storage.defaults.object(forKey: Self.decomposed) == nil)
    }

    /// What a save of the decomposed key left before keys were composed: an entry under exactly that key, in memory
    /// only or written to the suite's file too.
    func keepUnderTheDecomposedKey(_ data: Data, writtenToDisk: Bool) -> UserDefaultsStorage {
        let storage = storage
        storage.defaults.set(data, forKey: Self.decomposed)
        if writtenToDisk { storage.defaults.synchronize() }
        return storage
    }

    @Test(arguments: [false, true])
    func aValueKeptUnderADecomposedKeyBeforeKeysWereComposedIsReadThenMovedByTheNextSave(writtenToDisk: Bool) throws {
        let storage = keepUnderTheDecomposedKey(Data("before".utf8), writtenToDisk: writtenToDisk)
        #expect(try storage.load(key: Self.decomposed) == Data("before".utf8))
        try storage.save(Data("after".utf8), key: Self.decomposed)
        for instance in [storage, self.storage] {
            #expect(instance.defaults.object(forKey: Self.decomposed) == nil)
            #expect(try instance.load(key: Self.precomposed) == Data("after".utf8))
        }
    }

    @Test(arguments: [false, true])
    func removingADecomposedKeyAlsoRemovesWhatWasKeptUnderItBefore(writtenToDisk: Bool) throws {
        let storage = keepUnderTheDecomposedKey(Data("before".utf8), writtenToDisk: writtenToDisk)
        try storage.remove(key: Self.decomposed)
        for instance in [storage, self.storage] {
            #expect(try instance.load(key: Self.decomposed) == nil)
            #expect(instance.defaults.object(forKey: Self.decomposed) == nil)
        }
    }
}
