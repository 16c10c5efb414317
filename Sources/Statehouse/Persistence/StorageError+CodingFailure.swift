import Foundation

/// For the messages persistence builds: the words of a coding error without its values.
typealias CodingFailure = StorageError.CodingFailure

extension StorageError {
    /// Why a value did not encode or stored data did not decode, in words that never quote the value or the data:
    /// what ``StorageError/cause`` keeps in place of Foundation's `EncodingError` and `DecodingError`.
    ///
    /// Foundation's coding errors carry what they were given: `EncodingError.invalidValue` holds the value itself,
    /// a `DecodingError`'s description quotes the data ("Cannot initialize Plan from invalid String value …"), and
    /// its coding path names a dictionary's keys, which are data too. A value may be a secret, so a `StorageError`
    /// never keeps them: it keeps this instead, which says which kind of failure it was, which type, and where, with
    /// only the keys a type declares and array indices in the path.
    ///
    /// ```swift
    /// if let failure = error.cause as? StorageError.CodingFailure {
    ///     logger.error("\(failure)")    // "a Int was expected where the data holds something else, at profile.age"
    /// }
    /// ```
    public struct CodingFailure: Error, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The kind of failure, the type concerned and, when it is known, where in the value: never a value.
        public let description: String

        public var debugDescription: String { "CodingFailure(\(description))" }

        /// The words of `error`, a Foundation coding error, without its values.
        ///
        /// - Parameter error: An `EncodingError` or a `DecodingError`; any other error is described as it describes
        ///   itself (errors of a value's own coding code say what that code chose to say).
        public init(_ error: any Error) {
            description = Self.describe(error)
        }

        /// `error` as a ``StorageError`` may keep it as its cause: a Foundation coding error as a `CodingFailure`,
        /// any other unchanged.
        static func keepable(_ error: any Error) -> any Error {
            error is EncodingError || error is DecodingError ? CodingFailure(error) : error
        }

        /// The words for a message: those of a `CodingFailure` for a Foundation coding error, the error's own
        /// description for any other.
        static func describe(_ error: any Error) -> String {
            switch error {
            case EncodingError.invalidValue(let value, let context):
                "the encoder refused a value of type \(type(of: value))\(place(context.codingPath))"
            case DecodingError.typeMismatch(let type, let context):
                "a \(type) was expected where the data holds something else\(place(context.codingPath))"
            case DecodingError.valueNotFound(let type, let context):
                "a \(type) was expected where the data holds null or nothing\(place(context.codingPath))"
            case DecodingError.keyNotFound(let key, let context):
                // The key is one the type asked for, not one read from the data.
                "the key \(String(reflecting: key.stringValue)) is missing\(place(context.codingPath))"
            case DecodingError.dataCorrupted(let context):
                "the data is not valid JSON, or holds a value the type rejects\(place(context.codingPath))"
            case is EncodingError, is DecodingError:
                "\(type(of: error))"
            default:
                "\(error)"
            }
        }

        /// ", at a.b[2]" for a coding path, with the keys a type declares (an enum's cases, as `Codable` makes
        /// them) and array indices; any other key, a dictionary's key read from the data, shows as `*`.
        private static func place(_ path: [any CodingKey]) -> String {
            guard !path.isEmpty else { return "" }
            var text = ""
            for key in path {
                if let index = key.intValue, key.stringValue == "Index \(index)" {
                    text += "[\(index)]"
                } else {
                    let declared = Mirror(reflecting: key).displayStyle == .enum
                    text += (text.isEmpty ? "" : ".") + (declared ? key.stringValue : "*")
                }
            }
            return ", at \(text)"
        }
    }
}
