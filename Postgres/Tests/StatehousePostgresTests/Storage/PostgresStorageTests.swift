import Foundation
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import Testing

/// The storage's contract on a real server: what goes in comes out, for any key and any size.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct PostgresStorageTests {
    @Test func savedDataLoadsBack() async throws {
        try await withStorage { storage in
            try storage.save(Data("hello".utf8), key: "greeting")
            #expect(try storage.load(key: "greeting") == Data("hello".utf8))
            try storage.save(Data("again".utf8), key: "greeting")
            #expect(try storage.load(key: "greeting") == Data("again".utf8))
        }
    }

    @Test func missingKeyLoadsNil() async throws {
        try await withStorage { storage throws in
            #expect(try storage.load(key: "never-saved") == nil)
            #expect(try storage.fingerprint(key: "never-saved") == .absent)
        }
    }

    @Test func removedKeyLoadsNilAndRemovingNothingIsFine() async throws {
        try await withStorage { storage in
            try storage.save(Data([1, 2, 3]), key: "doomed")
            try storage.remove(key: "doomed")
            #expect(try storage.load(key: "doomed") == nil)
            #expect(try storage.fingerprint(key: "doomed") == .absent)
            try storage.remove(key: "doomed")
            try storage.remove(key: "never-there")
            try storage.save(Data([4]), key: "doomed")
            #expect(try storage.load(key: "doomed") == Data([4]))
        }
    }

    @Test func hostileKeysKeepTheirOwnRows() async throws {
        let keys = [
            "", " ", "'; DROP TABLE statehouse_state; --", "\"quoted\"", "back\\slash", "line\nbreak", "tab\t",
            "nul\u{0}inside", "nul\u{2400}inside", "%00", "../../etc/passwd", "emoji 🧪👩‍👩‍👧", "ключ", "$1", "?",
            String(repeating: "long", count: 5_000),
        ]
        try await withStorage { storage in
            for (index, key) in keys.enumerated() { try storage.save(Data("\(index)".utf8), key: key) }
            for (index, key) in keys.enumerated() {
                #expect(try storage.load(key: key) == Data("\(index)".utf8), "key \(index)")
            }
            // Keys Swift calls equal (precomposed or decomposed é) are one key.
            try storage.save(Data("composed".utf8), key: "caf\u{E9}")
            #expect(try storage.load(key: "cafe\u{301}") == Data("composed".utf8))
        }
    }

    @Test func valuesLargerThanANotificationRoundTrip() async throws {
        let large = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try await withStorage { storage in
            try storage.save(large, key: "large")
            #expect(try storage.load(key: "large") == large)
            let fingerprint = try storage.transact(key: "large") { data in (data ?? Data()) + large }
            #expect(fingerprint == (try storage.fingerprint(key: "large")))
            #expect(try storage.load(key: "large")?.count == 200_000)
        }
    }

    @Test func fingerprintChangesWithEverySaveAndRemoval() async throws {
        try await withStorage { storage in
            let first = try storage.saveReturningFingerprint(Data("a".utf8), key: "k")
            #expect(first == (try storage.fingerprint(key: "k")))
            let second = try storage.saveReturningFingerprint(Data("a".utf8), key: "k")
            #expect(second != first)
            try storage.remove(key: "k")
            let third = try storage.saveReturningFingerprint(Data("a".utf8), key: "k")
            #expect(Set([first, second, third]).count == 3)
        }
    }

    @Test func transactStoresWhatTheTransformReturns() async throws {
        try await withStorage { storage in
            let created = try storage.transact(key: "counter") { data in
                #expect(data == nil)
                return Data("1".utf8)
            }
            #expect(created == (try storage.fingerprint(key: "counter")))
            _ = try storage.transact(key: "counter") { data in
                Data("\(Int(String(decoding: data ?? Data(), as: UTF8.self))! + 1)".utf8)
            }
            #expect(try storage.load(key: "counter") == Data("2".utf8))
            #expect(try storage.transact(key: "counter") { _ in nil } == .absent)
            #expect(try storage.load(key: "counter") == nil)
            #expect(try storage.transact(key: "counter") { _ in nil } == .absent)
        }
    }

    @Test func transformThatThrowsStoresNothing() async throws {
        struct Refused: Error {}
        try await withStorage { storage in
            try storage.save(Data("kept".utf8), key: "k")
            #expect(throws: Refused.self) { try storage.transact(key: "k") { _ in throw Refused() } }
            #expect(try storage.load(key: "k") == Data("kept".utf8))
        }
    }

    @Test func transactionsFromManyThreadsLoseNothing() async throws {
        try await withStorage { storage in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await onThread {
                            for _ in 0..<50 {
                                _ = try storage.transact(key: "shared") { data in
                                    let count = data.map { Int(String(decoding: $0, as: UTF8.self))! } ?? 0
                                    return Data("\(count + 1)".utf8)
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try storage.load(key: "shared") == Data("400".utf8))
        }
    }

    @Test(arguments: ["", "State", "1table", "has-dash", "x;drop", String(repeating: "a", count: 49), "tablé"])
    func invalidTableNamesFailEveryOperation(name: String) async throws {
        try await withClient { client in
            let storage = PostgresStorage(client: client, table: name)
            let error = #expect(throws: StorageError.self) { try storage.load(key: "k") }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.message.contains("lowercase letters") == true)
            #expect(throws: StorageError.self) { try storage.save(Data(), key: "k") }
            #expect(throws: StorageError.self) { _ = try storage.watchChanges(of: "k") {} }
            await #expect(throws: StorageError.self) { try await storage.migrate() }
        }
    }

    @Test func theTableIsMadeOnceWhoeverComesFirst() async throws {
        let table = uniqueTable()
        try await withClient { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        try await onThread {
                            try PostgresStorage(client: client, table: table).save(Data("\(index)".utf8), key: "k\(index)")
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(try cluster.sql("SELECT count(*) FROM \(table)") == "6")
        #expect(try cluster.sql("SELECT count(*) FROM statehouse_migrations WHERE table_name = '\(table)'") == "1")
    }

    @Test func containersPersistThroughTheStorage() async throws {
        struct Settings: Codable, Equatable, Sendable { var theme = "blue"; var size = 12 }
        try await withStorage { storage in
            let table = storage.table
            try await onThread {
                let settings = StateContainer(Settings(), key: "settings", storage: storage, externalChanges: .ignore)
                settings.modify(Settings(theme: "red", size: 14))
                try settings.flush()
            }
            let reloaded = try await onThread {
                StateContainer(Settings(), key: "settings", storage: storage, externalChanges: .ignore).value
            }
            #expect(reloaded == Settings(theme: "red", size: 14))
            #expect(try cluster.sql("SELECT key FROM \(table)") == "settings")
        }
    }

    @Test func errorsNameTheKeyAndOperationAndNeverTheValue() async throws {
        try await withStorage { storage in
            try storage.save(Data("secret-value".utf8), key: "k")
            try cluster.sql("ALTER TABLE \(storage.table) ADD CONSTRAINT small CHECK (octet_length(value) < 5) NOT VALID")
            let error = #expect(throws: StorageError.self) { try storage.save(Data("secret-value".utf8), key: "k") }
            #expect(error?.kind == .io)
            #expect(error?.key == "k")
            #expect(error?.operation == .save)
            #expect(error?.message.contains("23514") == true)
            #expect(error?.message.contains("secret") == false)
            // postgres-nio's error keeps the query, whose parameters hold the value: the cause must not.
            #expect(!dumped(error).contains("secret"))
            #expect(!dumped(error).contains(hexBytes(of: "secret-value")))
            let cause = try #require(error?.cause as? PostgresErrorCause)
            #expect(cause.sqlState == "23514")
            #expect(cause.code == "server")
        }
    }
}

/// Everything `dump` shows of `value`: what a debugger or a log of the whole error would show.
func dumped(_ value: Any?) -> String {
    var text = ""
    dump(value, to: &text)
    return text
}

/// The bytes of `text` as hex digits (no separators), as a hex dump shows them.
func hexBytes(of text: String) -> String {
    Data(text.utf8).map { String(format: "%02x", $0) }.joined()
}
