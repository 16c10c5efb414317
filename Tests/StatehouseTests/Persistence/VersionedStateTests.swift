import Foundation
import Testing
@testable import Statehouse

struct SettingsV2: VersionedState, Equatable, Sendable {
    static let version = 2
    var theme: String
    var fontSize: Int

    static func migrate(from version: Int, data: Data) throws -> SettingsV2 {
        struct Old: Decodable { var theme: String }
        return SettingsV2(theme: try JSONDecoder().decode(Old.self, from: data).theme, fontSize: version == 0 ? 10 : 12)
    }
}

@Suite("Versioned state", .serialized)
struct VersionedStateTests {
    static let defaults = SettingsV2(theme: "blue", fontSize: 14)

    @Test func dataStoredBeforeVersioningIsMigratedFromVersionZero() throws {
        let storage = MemoryStorage()
        try storage.save(Data(#"{"theme":"dark"}"#.utf8), key: "versioned.v0")
        let settings = StateContainer(Self.defaults, key: "versioned.v0", storage: storage)
        #expect(settings.value == SettingsV2(theme: "dark", fontSize: 10))
        #expect(settings.storageError?.value == nil)
    }

    @Test func anOlderVersionIsMigratedAndWrittenBackInTheCurrentShape() throws {
        let storage = MemoryStorage()
        try storage.save(Data(#"{"value":{"theme":"dark"},"version":1}"#.utf8), key: "versioned.v1")
        let settings = StateContainer(Self.defaults, key: "versioned.v1", storage: storage)
        #expect(settings.value == SettingsV2(theme: "dark", fontSize: 12))
        settings.didModify()
        try settings.flush()
        let stored = try #require(try storage.load(key: "versioned.v1"))
        #expect(String(decoding: stored, as: UTF8.self) == #"{"value":{"fontSize":12,"theme":"dark"},"version":2}"#)
    }

    @Test func theCurrentVersionRoundTrips() throws {
        let storage = MemoryStorage()
        do {
            let settings = StateContainer(Self.defaults, key: "versioned.current", storage: storage)
            settings.update { $0.fontSize = 20 }
            try settings.flush()
        }
        let reloaded = StateContainer(Self.defaults, key: "versioned.current", storage: storage)
        #expect(reloaded.value == SettingsV2(theme: "blue", fontSize: 20))
    }

    @Test func aNewerVersionIsKeptAsideAndNotOverwritten() throws {
        let storage = MemoryStorage()
        let future = Data(#"{"value":{"theme":"dark","fontSize":1,"layout":"grid"},"version":3}"#.utf8)
        try storage.save(future, key: "versioned.future")
        let settings = StateContainer(Self.defaults, key: "versioned.future", storage: storage)
        #expect(settings.value == Self.defaults)
        let error = try #require(settings.storageError?.value)
        #expect(error.kind == .undecodable)
        #expect(error.message.contains("written by version 3"))
        let aside = try #require(storage.keys.first { $0.hasPrefix("versioned.future.undecodable.") })
        #expect(try storage.load(key: aside) == future)
    }
}
