import Foundation
import Statehouse
import StatehouseTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Storages that each break one promise the checks had no broken storage for yet: a check that no storage fails
// cannot be told from one that cannot fail.

/// Loads, for a key never saved, the data of the first key that begins with it: a lookup by prefix, as a sorted
/// store's range scan gets wrong.
final class PrefixMatchingStorage: StateStorage {
    private let backing: Backing

    init(_ backing: Backing) {
        self.backing = backing
    }

    func load(key: String) throws -> Data? {
        backing.entries.withLock { entries in
            entries[key] ?? entries.keys.sorted().first { $0.hasPrefix(key) }.flatMap { entries[$0] }
        }
    }

    func save(_ data: Data, key: String) throws {
        backing.entries.withLock { $0[key] = data }
    }

    func remove(key: String) throws {
        _ = backing.entries.withLock { $0.removeValue(forKey: key) }
    }
}

/// Writes a value in two steps, its first half then the rest, letting readers in between: as a file written in place
/// rather than renamed into place. With `opensSlowly`, an instance's first load takes 50 ms, as a connection opened
/// on first use does.
///
/// The first save made once readers have loaded keeps its half written until a load has returned a half value (or a
/// minute has passed): on a busy machine the readers could otherwise sleep through every save's window, and the check
/// would pass this storage by chance. Saves made before any load do not wait, so that a check whose writers do not
/// wait for its readers still misses the tears.
final class TearingStorage: StateStorage {
    private let backing: Backing
    private let opensSlowly: Bool
    private let opened = Locked(false)

    init(_ backing: Backing, opensSlowly: Bool = false) {
        self.backing = backing
        self.opensSlowly = opensSlowly
    }

    func load(key: String) throws -> Data? {
        if opensSlowly, !opened.withLock({ $0 }) {
            usleep(50_000)
            opened.withLock { $0 = true }
        }
        let data = backing.entries.withLock { $0[key] }
        backing.tears.aLoadHappened.withLock { $0 = true }
        if let data, backing.tears.halvesShown.withLock({ $0.contains(data) }) {
            backing.tears.aHalfWasLoaded.withLock { $0 = true }
        }
        return data
    }

    func save(_ data: Data, key: String) throws {
        let half = data.prefix(data.count / 2)
        let waitsForAReader = backing.tears.aLoadHappened.withLock { $0 }
            && backing.tears.waitedForAReader.withLock { waited in
                defer { waited = true }
                return !waited
            }
        backing.tears.halvesShown.withLock { _ = $0.insert(half) }
        backing.entries.withLock { $0[key] = half }
        if waitsForAReader {
            let deadline = ContinuousClock.now + .seconds(60)
            while !backing.tears.aHalfWasLoaded.withLock({ $0 }), ContinuousClock.now < deadline { usleep(100) }
        } else {
            usleep(100)  // the time a real write takes, in which a reader may see the half written
        }
        backing.entries.withLock { $0[key] = data }
        backing.tears.halvesShown.withLock { _ = $0.remove(half) }
    }

    func remove(key: String) throws {
        _ = backing.entries.withLock { $0.removeValue(forKey: key) }
    }
}

/// What the ``TearingStorage`` instances on one ``Backing`` show and saw.
final class TearLog: Sendable {
    /// The half values saves show at the moment.
    let halvesShown = Locked<Set<Data>>([])
    let aHalfWasLoaded = Locked(false)
    let aLoadHappened = Locked(false)
    let waitedForAReader = Locked(false)
}

/// Stores each save only when the same thread saves again, as a write-behind buffer per thread that is flushed late:
/// every thread's last save is lost.
final class LaggingStorage: StateStorage {
    private let backing: Backing
    private let pending = Locked<[UInt: (key: String, data: Data)]>([:])

    init(_ backing: Backing) {
        self.backing = backing
    }

    func load(key: String) throws -> Data? {
        backing.entries.withLock { $0[key] }
    }

    func save(_ data: Data, key: String) throws {
        let thread = UInt(bitPattern: Int(bitPattern: pthread_self()))
        guard let previous = pending.withLock({ $0.updateValue((key, data), forKey: thread) }) else { return }
        backing.entries.withLock { $0[previous.key] = previous.data }
    }

    func remove(key: String) throws {
        _ = backing.entries.withLock { $0.removeValue(forKey: key) }
    }
}

/// Fails, where nothing can be written, with an error whose message holds the data it was given.
struct ValueQuotingStorage: StateStorage {
    let directory: URL

    func load(key: String) throws -> Data? { nil }
    func remove(key: String) throws {}

    func save(_ data: Data, key: String) throws {
        throw StorageError(.io, key: key, operation: .save, message: """
            Could not save \(String(decoding: data, as: UTF8.self)) in \(directory.path): check its permissions.
            """)
    }
}

extension BrokenWriters {
    /// Stores a counter one smaller than the round before (100 first), says it is ready, and waits to be killed: as
    /// a storage that reads an older copy back after a crash.
    static let backwards = StorageConformance.CrashWriter(executable: URL(fileURLWithPath: "/bin/sh")) { place, key, _ in
        [
            "-c",
            #"mkdir -p "$0" && n=$(cat "$0/.next" 2>/dev/null || echo 100) && echo $((n - 1)) > "$0/.next" "#
                + #"&& printf '%s' "$n" > "$0/$1" && echo ready && exec sleep 30"#,
            place.directory.path, key,
        ]
    }
}

/// Transactions that keep others out, but empty the key before the transform runs and leave it empty when the
/// transform throws: as a storage that truncates its file before it writes.
final class TruncatingTransactionStorage: TransactionalStorage {
    /// The data, and a revision that every change bumps: the fingerprint.
    private let state = Locked<(entries: [String: Data], revision: Int64)>(([:], 0))

    init() {}

    func load(key: String) throws -> Data? {
        state.withLock { $0.entries[key] }
    }

    func save(_ data: Data, key: String) throws {
        state.withLock { state in
            state.entries[key] = data
            state.revision += 1
        }
    }

    func remove(key: String) throws {
        state.withLock { state in
            state.entries[key] = nil
            state.revision += 1
        }
    }

    func fingerprint(key: String) throws -> StorageFingerprint {
        state.withLock { $0.entries[key] == nil ? .absent : StorageFingerprint([$0.revision]) }
    }

    func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        try state.withLock { state in
            let old = state.entries.removeValue(forKey: key)
            state.revision += 1
            state.entries[key] = try transform(old)
            return state.entries[key] == nil ? .absent : StorageFingerprint([state.revision])
        }
    }
}
