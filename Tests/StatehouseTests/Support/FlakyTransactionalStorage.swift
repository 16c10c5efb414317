import Foundation
@testable import Statehouse

/// A transactional storage in memory whose transactions fail on cue *after* their transform ran, the way
/// PostgreSQL's does when its connection is lost and another writer changes the key before a new connection locks
/// it again. The stored values are `Int` counters encoded as JSON, which the "other writer" increments.
///
/// Faults are taken in order from those queued with ``inject(_:)``; with ``failEvery(_:)``, every n-th transaction
/// (counted from then on) that has no queued fault fails with ``Fault/conflict(then:)``.
final class FlakyTransactionalStorage: TransactionalStorage {
    enum Fault: Sendable {
        /// The transform runs, nothing is stored, another process increments the stored counter, `then` runs (on
        /// the transaction's thread), and the transaction throws.
        case conflict(then: @Sendable () -> Void = {})
        /// The transform runs, its answer is committed, but the answer of the commit is lost: the transaction
        /// throws an error the storage marks as leaving the outcome unknown.
        case commitAnswerLost
        /// The transform runs, `then` runs, and the answer is committed: something happened between the two.
        case pauseBeforeCommit(then: @Sendable () -> Void)
    }

    /// The cause of the error thrown for ``Fault/commitAnswerLost``, which ``outcomeIsUnknown(after:)`` recognizes.
    struct CommitAnswerLost: Error {}

    private struct Plan {
        var queued: [Fault] = []
        var failEvery: Int?
        var sinceLastFailure = 0
        var transactions = 0
        var outsideIncrements = 0

        mutating func next() -> Fault? {
            transactions += 1
            if !queued.isEmpty { return queued.removeFirst() }
            guard let failEvery else { return nil }
            sinceLastFailure += 1
            guard sinceLastFailure == failEvery else { return nil }
            sinceLastFailure = 0
            return .conflict()
        }
    }

    let base = AttackMemoryStorage()
    private let plan = Locked(Plan())

    /// Queues `faults` for the next transactions.
    func inject(_ faults: Fault...) {
        plan.withLock { $0.queued += faults }
    }

    /// From now on, every `n`-th transaction without a queued fault fails with a conflict.
    func failEvery(_ n: Int) {
        plan.withLock { $0.failEvery = n }
    }

    /// How many transactions were started.
    var transactionCount: Int { plan.withLock { $0.transactions } }
    /// How many times the "other process" incremented the counter.
    var outsideIncrements: Int { plan.withLock { $0.outsideIncrements } }

    /// The stored counter, `nil` if nothing is stored.
    func storedCount(key: String) throws -> Int? {
        try base.load(key: key).map { try JSONDecoder().decode(Int.self, from: $0) }
    }

    func load(key: String) throws -> Data? { try base.load(key: key) }
    func save(_ data: Data, key: String) throws { try base.save(data, key: key) }
    func remove(key: String) throws { try base.remove(key: key) }
    func fingerprint(key: String) throws -> StorageFingerprint { try base.fingerprint(key: key) }

    func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try base.saveReturningFingerprint(data, key: key)
    }

    func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        switch plan.withLock({ $0.next() }) {
        case nil:
            return try base.transact(key: key, transform)
        case .conflict(let then)?:
            do {
                _ = try base.transact(key: key) { data in
                    _ = try transform(data)
                    throw Abandoned()
                }
            } catch is Abandoned {}
            try incrementOutside(key: key)
            then()
            throw StorageError(
                .io, key: key, operation: .transact, message: "Injected: another writer changed the key; try again."
            )
        case .commitAnswerLost?:
            _ = try base.transact(key: key, transform)
            throw StorageError(
                .io, key: key, operation: .transact, message: "Injected: the answer of the commit was lost.",
                cause: CommitAnswerLost()
            )
        case .pauseBeforeCommit(let then)?:
            var answer: Data??
            do {
                _ = try base.transact(key: key) { data in
                    answer = try transform(data)
                    throw Abandoned()
                }
            } catch is Abandoned {}
            then()
            return try base.transact(key: key) { _ in answer ?? nil }
        }
    }

    func outcomeIsUnknown(after error: StorageError) -> Bool {
        error.cause is CommitAnswerLost
    }

    /// Another process adds one to the counter.
    private func incrementOutside(key: String) throws {
        _ = try base.transact(key: key) { data in
            let stored = try data.map { try JSONDecoder().decode(Int.self, from: $0) } ?? 0
            return try JSONEncoder().encode(stored + 1)
        }
        plan.withLock { $0.outsideIncrements += 1 }
    }

    private struct Abandoned: Error {}
}
