import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

private enum Shape: Codable, Equatable, Sendable {
    case circle(radius: Double)
    case tagged([String: Double])
}

/// Values and stored data stay out of a `StorageError`'s text, whatever shape the value has: dictionary keys on the
/// way in and out, enum payloads, unknown enum cases.
@Suite("Coding errors keep values and stored data out of their text")
struct CodingErrorsHideValuesTests {
    /// A value that does not encode (a NaN under a secret dictionary key): the error is `.unencodable`, and none of
    /// its texts holds the key.
    @Test func aDictionaryKeyInTheEncodingPathIsNotInTheError() throws {
        let hidden = "secret-\(UInt64.random(in: 0...UInt64.max))"
        let readings = StateContainer([String: Double](), key: "coding.encode.dict", storage: MemoryStorage())
        readings.modify([hidden: .nan])
        let error = try #require(throws: StorageError.self) { try readings.flush() }
        #expect(error.kind == .unencodable)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    /// The same with the key in a dictionary inside an enum's payload.
    @Test func aNestedDictionaryKeyInAnEnumPayloadIsNotInTheError() throws {
        let hidden = "secret-\(UInt64.random(in: 0...UInt64.max))"
        let shape = StateContainer(Shape.circle(radius: 1), key: "coding.encode.enum", storage: MemoryStorage())
        shape.modify(.tagged(["outer": 1, hidden: .infinity]))
        let error = try #require(throws: StorageError.self) { try shape.flush() }
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    /// Stored data that does not decode, under a secret key two dictionaries deep: the key is in no text of the error.
    @Test func aNestedDictionaryKeyInTheDecodingPathIsNotInTheError() throws {
        let hidden = "secret-\(UInt64.random(in: 0...UInt64.max))"
        let storage = MemoryStorage()
        try storage.save(Data(#"{"a": {"\#(hidden)": {"x": "ten"}}}"#.utf8), key: "coding.decode.nested")
        let nested = StateContainer([String: [String: [String: Int]]](), key: "coding.decode.nested", storage: storage)
        let error = try #require(nested.storageError?.value)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    /// An enum payload that does not decode: its content is in no text of the error.
    @Test func anEnumPayloadThatDoesNotDecodeIsNotInTheError() throws {
        let hidden = "secret-\(UInt64.random(in: 0...UInt64.max))"
        let storage = MemoryStorage()
        try storage.save(Data(#"{"tagged": {"_0": {"\#(hidden)": "x"}}}"#.utf8), key: "coding.decode.enum")
        let shape = StateContainer(Shape.circle(radius: 1), key: "coding.decode.enum", storage: storage)
        let error = try #require(shape.storageError?.value)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    /// An unknown enum case read from the data: its name is in no text of the error.
    @Test func anUnknownEnumCaseFromTheDataIsNotInTheError() throws {
        let hidden = "secret\(UInt64.random(in: 0...UInt64.max))"
        let storage = MemoryStorage()
        try storage.save(Data(#"{"\#(hidden)": {}}"#.utf8), key: "coding.decode.case")
        let shape = StateContainer(Shape.circle(radius: 1), key: "coding.decode.case", storage: storage)
        let error = try #require(shape.storageError?.value)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }
}
