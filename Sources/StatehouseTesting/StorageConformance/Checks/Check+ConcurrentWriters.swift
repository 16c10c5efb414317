import Foundation
import Statehouse
import Testing

extension StorageConformance.Check {
    /// Eight threads, half of them on one instance and half on another, each save their own keys over and over: in
    /// the end every key holds its last save, so no write was lost to another's.
    public static let concurrentWritersOnDistinctKeys = Self(
        id: "concurrentWritersOnDistinctKeys",
        name: "concurrent writers on distinct keys: eight threads on two instances lose no write"
    ) { subject in
        let instances = [try subject.instance(), try subject.instance()]
        let failures = FailureLog()
        let (threads, keysEach, rounds) = (8, 4, 8)
        await onThreads(threads) { thread in
            let storage = instances[thread % instances.count].storage
            for round in 0..<rounds {
                for index in 0..<keysEach {
                    let key = DistinctKeys.key(thread: thread, index: index)
                    do {
                        try storage.save(DistinctKeys.value(thread: thread, index: index, round: round), key: key)
                    } catch {
                        return failures.append(StorageProbe.failure(of: "save", key: key, error: error))
                    }
                }
            }
        }
        failures.record(in: subject)
        let reader = try subject.instance()
        for thread in 0..<threads {
            for index in 0..<keysEach {
                let key = DistinctKeys.key(thread: thread, index: index)
                let expected = DistinctKeys.value(thread: thread, index: index, round: rounds - 1)
                let loaded = try reader.load(key)
                #expect(
                    loaded == expected,
                    """
                    \(describe(key: key)) should hold its thread's last save, \(String(decoding: expected, as: UTF8.self)); \
                    it holds \(loaded.map { String(decoding: $0.prefix(40), as: UTF8.self) } ?? "nothing").
                    """,
                    sourceLocation: subject.sourceLocation
                )
            }
        }
    }

    /// Six threads on two instances save one key over and over while two more load it: every load is nothing or a
    /// whole saved value, never a mix of two, and the key ends with the last save of one of the writers. The writers
    /// start once each reader has loaded once, so that the readers look while the saves happen.
    public static let concurrentWritersOnOneKey = Self(
        id: "concurrentWritersOnOneKey",
        name: "concurrent writers on one key: never a torn value, and one writer's last save stays"
    ) { subject in
        let instances = [try subject.instance(), try subject.instance()]
        let key = "conformance.contended"
        let failures = FailureLog()
        let (writers, readers, rounds) = (6, 2, 12)
        let writing = StopFlag()
        // The writers wait for every reader's first load: started late (a busy machine, a storage slow to open), the
        // readers would otherwise only see the end, and a storage that tears values would pass.
        let readersStarted = Arrivals()
        async let reading: Void = onThreads(readers) { reader in
            let storage = instances[reader % instances.count].storage
            var first = true
            while !writing.isStopped {
                defer {
                    if first { readersStarted.arrive() }
                    first = false
                }
                do {
                    if let data = try storage.load(key: key), OneKeyPayload.parse(data) == nil {
                        return failures.append("A load while others saved returned a torn value (\(data.count) bytes).")
                    }
                } catch {
                    return failures.append(StorageProbe.failure(of: "load", key: key, error: error))
                }
            }
        }
        await onThreads(writers) { writer in
            let storage = instances[writer % instances.count].storage
            readersStarted.wait(for: readers)
            for round in 0..<rounds {
                do {
                    try storage.save(OneKeyPayload.make(writer: writer, round: round), key: key)
                } catch {
                    return failures.append(StorageProbe.failure(of: "save", key: key, error: error))
                }
            }
        }
        writing.stop()
        await reading
        failures.record(in: subject)
        let final = try subject.instance().load(key)
        let parsed = final.flatMap(OneKeyPayload.parse)
        try subject.require(
            parsed != nil, "After the concurrent saves, the key holds \(describe(final)): not one whole saved value.")
        // Each writer saves in order: the last save to land is some writer's last, unless the storage let one
        // thread's earlier save replace its own later one.
        #expect(
            parsed?.round == rounds - 1,
            "The key ends with round \(parsed?.round ?? -1) of writer \(parsed?.writer ?? -1), not a writer's last save.",
            sourceLocation: subject.sourceLocation
        )
    }
}

/// The keys and values of the distinct-keys check.
private enum DistinctKeys {
    static func key(thread: Int, index: Int) -> String {
        "conformance.distinct.\(thread).\(index)"
    }

    static func value(thread: Int, index: Int, round: Int) -> Data {
        Data("thread \(thread), key \(index), round \(round)".utf8)
    }
}

/// The values of the one-key check: each tells who saved it, and has a length and filling of its own, so that a mix
/// of two is recognized.
enum OneKeyPayload {
    static func make(writer: Int, round: Int) -> Data {
        let fill = UInt8(truncatingIfNeeded: writer &* 37 &+ round &* 11 &+ 1)
        return Data("\(writer) \(round)\n".utf8) + Data(repeating: fill, count: 16_384 + writer * 97 + round)
    }

    /// Who saved `data`, if it is exactly a value ``make(writer:round:)`` makes.
    static func parse(_ data: Data) -> (writer: Int, round: Int)? {
        guard let newline = data.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let header = String(decoding: data[..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        // Bounded before `make` allocates: a torn header can hold any number.
        guard header.count == 2, (0..<64).contains(header[0]), (0..<1_024).contains(header[1]),
            make(writer: header[0], round: header[1]) == data
        else { return nil }
        return (header[0], header[1])
    }
}

/// Tells threads to stop.
final class StopFlag: Sendable {
    private let stopped = Locked(false)

    func stop() {
        stopped.withLock { $0 = true }
    }

    var isStopped: Bool {
        stopped.withLock { $0 }
    }
}

/// Counts threads that reached a point, and holds others until enough have.
final class Arrivals: Sendable {
    private let count = Locked(0)

    func arrive() {
        count.withLock { $0 += 1 }
    }

    /// Returns once `expected` threads have arrived; blocks the calling thread (never one of the cooperative pool's)
    /// meanwhile.
    func wait(for expected: Int) {
        while count.withLock({ $0 }) < expected {
            sched_yield()
        }
    }
}
