import Foundation
import Statehouse
import Testing

extension StorageConformance.Check {
    /// For a `TransactionalStorage`: eight threads on two instances, each incrementing one counter in transactions,
    /// lose no increment. A transaction sees `nil` for a missing key, returns the fingerprint the key then has,
    /// writes nothing when its transform throws (and throws that error, as is or as a `StorageError`'s cause), and
    /// removes the key when its transform returns `nil`.
    public static let transactions = Self(
        id: "transactions",
        name: "transactions: eight threads on two instances incrementing one counter lose no increment"
    ) { subject in
        let instances = [try subject.instance(), try subject.instance()]
        let storages = [try subject.transactional(instances[0]), try subject.transactional(instances[1])]
        let key = "conformance.counter"
        let (first, storage) = (instances[0], storages[0])

        var sawNothing = false
        let fingerprint = try first.attempt("transact", key: key) {
            try storage.transact(key: key) { data in
                sawNothing = data == nil
                return Counter.encode(0)
            }
        }
        #expect(
            sawNothing, "A transaction on a missing key was given data, not nil.",
            sourceLocation: subject.sourceLocation)
        #expect(
            try first.attempt("fingerprint", key: key) { try storage.fingerprint(key: key) } == fingerprint,
            "transact returned another fingerprint than fingerprint(key:) then read.",
            sourceLocation: subject.sourceLocation
        )

        try checkThrowingTransform(instances[1], storages[1], key: key, subject)

        let failures = FailureLog()
        let (threads, increments) = (8, 25)
        await onThreads(threads) { thread in
            let storage = storages[thread % storages.count]
            for _ in 0..<increments {
                do {
                    _ = try storage.transact(key: key) { data in Counter.encode(Counter.decode(data) + 1) }
                } catch {
                    return failures.append(StorageProbe.failure(of: "transact", key: key, error: error))
                }
            }
        }
        failures.record(in: subject)
        let total = try first.load(key)
        #expect(
            total == Counter.encode(threads * increments),
            "\(threads) threads × \(increments) increments ended at \(Counter.describe(total)), not \(threads * increments).",
            sourceLocation: subject.sourceLocation
        )

        let removal = try first.attempt("transact", key: key) { try storage.transact(key: key) { _ in nil } }
        try subject.expect(instances[1], loads: nil, for: key, "A transaction returning nil did not remove the key.")
        #expect(
            removal == .absent, "A transaction that removed the key returned a fingerprint other than .absent.",
            sourceLocation: subject.sourceLocation
        )
    }

    private struct Refusal: Error {}

    /// A transform that throws: the transaction writes nothing and throws what the transform threw.
    private static func checkThrowingTransform(
        _ probe: StorageProbe, _ storage: any TransactionalStorage, key: String, _ subject: ConformanceSubject
    ) throws {
        do {
            _ = try storage.transact(key: key) { _ in throw Refusal() }
            subject.fail("transact returned although its transform threw.")
        } catch is Refusal {
            // What the protocol documents.
        } catch let error as StorageError where error.cause is Refusal {
            // The transform's error, kept as the cause.
        } catch {
            subject.fail("transact threw \(describe(error)) where its transform threw its own error.")
        }
        try subject.expect(
            probe, loads: Counter.encode(0), for: key, "A transaction whose transform threw changed the key.")
    }
}

/// The transactions check's counter, stored as decimal digits.
private enum Counter {
    static func encode(_ value: Int) -> Data {
        Data(String(value).utf8)
    }

    static func decode(_ data: Data?) -> Int {
        data.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
    }

    static func describe(_ data: Data?) -> String {
        data.map { String(decoding: $0.prefix(20), as: UTF8.self) } ?? "nothing"
    }
}
