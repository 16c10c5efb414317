import Foundation

/// A value as JSON shows it: what the page draws as a tree, and what diffs compare.
///
/// Objects keep their keys sorted, so that two encodings of one value are equal and a diff lists paths in a stable
/// order.
public enum JSONTree: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONTree])
    case object([String: JSONTree])

    /// `value` encoded by `JSONEncoder` (dates as ISO 8601) and read back as a tree.
    public init(encoding value: some Encodable) throws {
        let data = try Self.encoder.encode(value)
        self = try JSONDecoder().decode(JSONTree.self, from: data)
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    /// The case name of an encoded enum (`{"rename": {...}}` names `rename`), a string's own text, or `nil`.
    var caseName: String? {
        switch self {
        case .object(let members) where members.count == 1: members.keys.first
        case .string(let text): text
        default: nil
        }
    }
}

extension JSONTree: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONTree].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONTree].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .number(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }
}
