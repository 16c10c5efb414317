import Foundation
import Statehouse

/// Checks how a storage in trouble fails: with `StorageError`s that name the key and the operation, say what
/// happened, and never contain the value.
struct ErrorExaminer {
    let subject: ConformanceSubject
    let key: String
    /// Where the storage is, for failure messages: "in a directory that cannot be created".
    let situation: String
    /// What the check tries to save: no error message may contain it.
    let secret = Data("conformance secret \(UUID().uuidString)".utf8)

    /// Makes the storage on `place`; a `StorageError` (checked) or another error (a failure) gives `nil`.
    func makeStorage(on place: StorageConformance.Place) -> (any StateStorage)? {
        do {
            return try subject.makeStorage(place)
        } catch let error as StorageError {
            if error.message.isEmpty {
                subject.fail("Making the storage \(situation) threw a StorageError with no message.")
            }
        } catch {
            subject.fail("Making the storage \(situation) threw \(describe(error)).")
        }
        return nil
    }

    /// Calls every operation of `storage` on the key, those that read first (a save would replace damaged data);
    /// each may succeed, except those in `mustFail`, and what each throws must be a good `StorageError`.
    func tryEveryOperation(on storage: any StateStorage, mustFail: Set<StorageError.Operation>) {
        let secret = secret
        let key = key
        examine(.load, mustFail: mustFail) { _ = try storage.load(key: key) }
        if let detecting = storage as? any ChangeDetectingStorage {
            examine(.fingerprint, mustFail: mustFail) { _ = try detecting.fingerprint(key: key) }
        }
        if let transactional = storage as? any TransactionalStorage {
            examine(.transact, mustFail: mustFail) { _ = try transactional.transact(key: key) { _ in secret } }
        }
        examine(.save, mustFail: mustFail) { try storage.save(secret, key: key) }
        examine(.remove, mustFail: mustFail) { try storage.remove(key: key) }
    }

    private func examine(
        _ operation: StorageError.Operation, mustFail: Set<StorageError.Operation>, _ call: () throws -> Void
    ) {
        let name = "\(operation.rawValue)(key: \(describe(key: key)))"
        do {
            try call()
            if mustFail.contains(operation) { subject.fail("\(name) succeeded \(situation).") }
        } catch let error as StorageError {
            let problems = problems(of: error, in: operation)
            if !problems.isEmpty {
                subject.fail(
                    "\(name) threw a StorageError \(situation), but \(problems.joined(separator: "; ")): \(error.message)"
                )
            }
        } catch {
            subject.fail("\(name) \(situation) threw \(describe(error)).")
        }
    }

    private func problems(of error: StorageError, in operation: StorageError.Operation) -> [String] {
        let secretText = String(decoding: secret, as: UTF8.self)
        return [
            error.key == key
                ? nil : "its key is \(error.key.map { describe(key: $0) } ?? "nil"), not \(describe(key: key))",
            error.operation == operation
                ? nil : "its operation is \(error.operation.map { ".\($0)" } ?? "nil"), not .\(operation)",
            error.message.isEmpty ? "its message is empty" : nil,
            // A cause is logged with its error: it must not hold the value either.
            [error.message, error.cause.map { "\($0)" } ?? ""].contains { $0.contains(secretText) }
                ? "its message or cause contains the value" : nil,
        ].compactMap(\.self)
    }
}
