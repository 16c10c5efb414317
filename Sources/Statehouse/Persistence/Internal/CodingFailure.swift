import Foundation

/// Why a value did not encode or stored data did not decode, in words that never quote the value or the data.
///
/// Foundation's descriptions of coding errors quote what they were given (`EncodingError.invalidValue: "…"`,
/// "Cannot initialize Plan from invalid String value …", a dictionary's keys in a coding path), and a value may be a
/// secret: messages say which kind of failure it was and which type, and leave the rest to the error kept as the
/// `cause`. Other errors, thrown by the value's own coding or migration code, say what that code chose to say.
enum CodingFailure {
    static func describe(_ error: any Error) -> String {
        switch error {
        case EncodingError.invalidValue(let value, _):
            "the encoder refused a value of type \(type(of: value))"
        case DecodingError.typeMismatch(let type, _):
            "a \(type) was expected where the data holds something else"
        case DecodingError.valueNotFound(let type, _):
            "a \(type) was expected where the data holds null or nothing"
        case DecodingError.keyNotFound(let key, _):
            // The key is one the type asked for, not one read from the data.
            "the key \(String(reflecting: key.stringValue)) is missing"
        case DecodingError.dataCorrupted:
            "the data is not valid JSON, or holds a value the type rejects"
        case is EncodingError, is DecodingError:
            "\(type(of: error))"
        default:
            "\(error)"
        }
    }
}
