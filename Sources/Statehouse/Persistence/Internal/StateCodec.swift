import Foundation

/// How a persisted value becomes bytes and back, chosen once when its container or store is made.
///
/// Three shapes: plain JSON; an optional, whose `nil` removes the stored entry instead of storing `null`; and a
/// ``VersionedState``, stored in its versioned envelope and migrated when older.
struct StateCodec<Value: Sendable>: Sendable {
    let decode: @Sendable (Data) throws -> Value
    /// `nil`: remove the entry.
    let encode: @Sendable (Value) throws -> Data?
    /// What an entry that someone else removed stands for: `nil` for an optional, whose `nil` removes the entry;
    /// none otherwise, where a removal says nothing about the value (it is not followed).
    var whenRemoved: Value?
}

extension StateCodec where Value: Codable {
    /// Plain JSON, or, when `Value` is an optional, JSON with `nil` removing the entry.
    static var json: StateCodec {
        let decode: @Sendable (Data) throws -> Value = { try JSONDecoder().decode(Value.self, from: $0) }
        guard Value.self is any OptionalValue.Type else {
            return StateCodec(decode: decode, encode: { try JSONEncoder.statehouse.encode($0) })
        }
        return StateCodec(
            decode: decode,
            encode: { value in
                (value as? any OptionalValue)?.isNil == true ? nil : try JSONEncoder.statehouse.encode(value)
            },
            whenRemoved: (Value.self as? any OptionalValue.Type)?.nilValue as? Value
        )
    }
}

extension StateCodec where Value: VersionedState {
    /// The versioned envelope, `{"version": …, "value": …}`; older data is migrated as it is read.
    static var versioned: StateCodec {
        StateCodec(
            decode: { try VersionedDecoding.decode(Value.self, from: $0) },
            encode: { try JSONEncoder.statehouse.encode(VersionedEnvelope(version: Value.version, value: $0)) }
        )
    }
}

/// Values that are `nil` are removed from storage instead of being written as `null`.
protocol OptionalValue {
    var isNil: Bool { get }
    static var nilValue: Self { get }
}

extension Optional: OptionalValue {
    var isNil: Bool { self == nil }
    static var nilValue: Self { nil }
}

extension JSONEncoder {
    /// Sorted keys, so that equal values give equal bytes.
    static var statehouse: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}
