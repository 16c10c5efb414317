import Foundation

/// Why stored data did not decode, in words that never quote the data.
///
/// Foundation's descriptions of decoding errors may quote what was stored ("Cannot initialize Plan from invalid
/// String value …", a dictionary's keys in a coding path), and stored data may be a secret: messages say which kind of
/// failure it was and what type was expected, and leave the rest to the error kept as the `cause`.
enum DecodingFailure {
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(let type, _):
            "a \(type) was expected where the data holds something else"
        case DecodingError.valueNotFound(let type, _):
            "a \(type) was expected where the data holds null or nothing"
        case DecodingError.keyNotFound(let key, _):
            // The key is one the type asked for, not one read from the data.
            "the key \(String(reflecting: key.stringValue)) is missing"
        case DecodingError.dataCorrupted:
            "the data is not valid JSON, or holds a value the type rejects"
        case let newer as VersionedDecoding.NewerVersion:
            newer.description
        default:
            "\(type(of: error)) was thrown"
        }
    }
}
