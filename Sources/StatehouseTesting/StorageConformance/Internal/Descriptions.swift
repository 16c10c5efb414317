import Foundation
import Statehouse

/// `key` as code writes it, cut short when long: a failure message names a 1,000-character key without holding it.
func describe(key: String) -> String {
    let written = String(reflecting: key)
    guard written.count > 60 else { return written }
    return "\(written.prefix(40))…\" (\(key.count) characters)"
}

/// `error` with its type, saying so when it is not a `StorageError`, the one error type storages may throw.
func describe(_ error: any Error) -> String {
    if let error = error as? StorageError {
        return "StorageError(.\(error.kind)): \(error.message)"
    }
    return "\(String(reflecting: type(of: error))), not a StorageError (every storage error must be one): \(error)"
}

/// What a load returned, by size: the bytes themselves would fill the failure message.
func describe(_ data: Data?) -> String {
    guard let data else { return "nothing" }
    return "\(data.count) bytes"
}
