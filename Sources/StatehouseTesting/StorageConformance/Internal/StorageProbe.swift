import Foundation
import Statehouse
import Testing

/// One instance of the storage under test, whose calls record what they throw as an issue and stop the check.
///
/// Threads use ``storage`` directly and collect ``failure(of:key:error:)`` messages instead: an issue recorded
/// outside the test's task would not be attributed to the test.
struct StorageProbe: Sendable {
    let storage: any StateStorage
    let sourceLocation: SourceLocation

    func load(_ key: String) throws -> Data? {
        try attempt("load", key: key) { try storage.load(key: key) }
    }

    func save(_ data: Data, _ key: String) throws {
        try attempt("save", key: key) { try storage.save(data, key: key) }
    }

    func remove(_ key: String) throws {
        try attempt("remove", key: key) { try storage.remove(key: key) }
    }

    /// Runs `call`, the storage's operation `name` on `key`; records what it throws and stops the check.
    func attempt<Result>(_ name: String, key: String, _ call: () throws -> Result) throws -> Result {
        do {
            return try call()
        } catch {
            Issue.record(
                Comment(rawValue: Self.failure(of: name, key: key, error: error)), sourceLocation: sourceLocation)
            throw CheckStopped()
        }
    }

    /// What to report when the operation `name` on `key` threw `error`.
    static func failure(of name: String, key: String, error: any Error) -> String {
        "\(name)(key: \(describe(key: key))) threw \(describe(error))."
    }
}
