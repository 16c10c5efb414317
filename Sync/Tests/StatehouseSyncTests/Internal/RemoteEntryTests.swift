import Foundation
@testable import StatehouseSync
import Synchronization
import Testing

/// A remote container's cache entry, without a server: what the app sees, what a push replaces, and how a write that
/// met a newer value is settled.
@Suite struct RemoteEntryTests {
    private let a = Data("\"a\"".utf8)
    private let b = Data("\"b\"".utf8)
    private let c = Data("\"c\"".utf8)

    private func entry(server: Data?, version: Int64) -> RemoteEntry {
        var entry = RemoteEntry()
        entry.heard(server, version: version)
        return entry
    }

    @Test func theAppSeesItsOwnWriteUntilTheServerHoldsIt() {
        var entry = entry(server: a, version: 1)
        entry.record(b)
        entry.heard(c, version: 2)
        #expect(entry.visible == b)
        #expect(entry.pending?.base == 1 && entry.pending?.baseValue == a)
        entry.stored(b, version: 3, pushing: entry.pending!.number)
        #expect(entry.pending == nil && entry.visible == b && entry.version == 3)
    }

    /// Two writes before a push: one push of the last, made on the first's base.
    @Test func aSecondWriteKeepsTheFirstsBase() {
        var entry = entry(server: a, version: 1)
        entry.record(b)
        entry.record(c)
        #expect(entry.pending?.value == c && entry.pending?.base == 1 && entry.pending?.number == 1)
    }

    /// A write made while a push was on the wire stays pending, on top of what the push stored.
    @Test func aWriteMadeDuringAPushStaysOnTopOfIt() {
        var entry = entry(server: a, version: 1)
        entry.record(b)
        let pushed = entry.pending!
        entry.record(c)
        entry.stored(pushed.value, version: 2, pushing: pushed.number)
        #expect(entry.pending?.value == c && entry.pending?.base == 2 && entry.pending?.baseValue == b)
    }

    @Test func anOlderValueHeardLateIsIgnored() {
        var entry = entry(server: b, version: 5)
        entry.heard(a, version: 4)
        #expect(entry.server == b && entry.version == 5)
    }

    @Test func theDefaultPolicyPushesTheLocalWriteOnTheNewerVersion() {
        var entry = entry(server: a, version: 1)
        entry.record(b)
        entry.resolve(against: c, version: 2, with: .rerunUpdate)
        #expect(entry.pending?.value == b && entry.pending?.base == 2 && entry.pending?.baseValue == c)
    }

    @Test func serverWinsDropsTheLocalWrite() {
        var entry = entry(server: a, version: 1)
        entry.record(b)
        entry.resolve(against: c, version: 2, with: .serverWins)
        #expect(entry.pending == nil && entry.visible == c)
    }

    /// A push whose answer was lost, pushed again, hears 412: the server holds the write's bytes, so it is done.
    @Test func aWriteTheServerAlreadyHoldsIsDone() {
        var entry = entry(server: a, version: 1)
        entry.record(b)
        entry.resolve(against: b, version: 2, with: .rerunUpdate)
        #expect(entry.pending == nil && entry.visible == b && entry.version == 2)
    }

    @Test func aMergeSeesTheBaseTheLocalAndTheRemoteValue() throws {
        let seen = MergeCalls()
        let policy = ConflictPolicy.merge(Int.self) { base, local, remote in
            seen.record(base, local, remote)
            return local + remote - (base ?? 0)
        }
        var entry = entry(server: Data("10".utf8), version: 1)
        entry.record(Data("13".utf8))
        entry.resolve(against: Data("15".utf8), version: 2, with: policy)
        #expect(seen.calls == [[10, 13, 15]])
        #expect(entry.pending?.value == Data("18".utf8) && entry.pending?.base == 2)
    }

    /// Bytes another version of the app wrote, which do not decode: the server's value stays, nothing is guessed.
    @Test func aMergeOfBytesThatDoNotDecodeTakesTheServersValue() {
        var entry = entry(server: Data("10".utf8), version: 1)
        entry.record(Data("11".utf8))
        entry.resolve(against: Data("\"eleven\"".utf8), version: 2, with: .merge(Int.self) { _, local, _ in local })
        #expect(entry.pending == nil && entry.visible == Data("\"eleven\"".utf8))
    }

    /// A removal on either side wins over a merge.
    @Test func aRemovalWinsOverAMerge() {
        let policy = ConflictPolicy.merge(Int.self) { _, local, _ in local }
        var removedHere = entry(server: Data("1".utf8), version: 1)
        removedHere.record(nil)
        removedHere.resolve(against: Data("2".utf8), version: 2, with: policy)
        #expect(removedHere.pending?.value == .some(nil) && removedHere.visible == nil)
        var removedThere = entry(server: Data("1".utf8), version: 1)
        removedThere.record(Data("3".utf8))
        removedThere.resolve(against: nil, version: 2, with: policy)
        #expect(removedThere.pending == nil && removedThere.visible == nil)
    }
}

private final class MergeCalls: Sendable {
    private let state = Mutex<[[Int?]]>([])

    func record(_ base: Int?, _ local: Int, _ remote: Int) {
        state.withLock { $0.append([base, local, remote]) }
    }

    var calls: [[Int?]] {
        state.withLock { $0 }
    }
}
