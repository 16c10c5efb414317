import Foundation
import StatehouseTestSupport
import Testing
@testable import Statehouse

private enum Shape: Codable, Equatable, Sendable {
    case circle(radius: Double)
    case tagged([String: Double])
}

/// S9 attack: values and data must stay out of a `StorageError` whatever shape the value has.
@Suite struct AttackS9CodingTests {
    @Test func aDictionaryKeyInTheEncodingPathIsNotInTheError() throws {
        let hidden = "secret-\(UInt64.random(in: 0...UInt64.max))"
        let readings = StateContainer([String: Double](), key: "s9.encode.dict", storage: MemoryStorage())
        readings.modify([hidden: .nan])
        let error = try #require(throws: StorageError.self) { try readings.flush() }
        #expect(error.kind == .unencodable)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    @Test func aNestedDictionaryKeyInAnEnumPayloadIsNotInTheError() throws {
        let hidden = "secret-\(UInt64.random(in: 0...UInt64.max))"
        let shape = StateContainer(Shape.circle(radius: 1), key: "s9.encode.enum", storage: MemoryStorage())
        shape.modify(.tagged(["outer": 1, hidden: .infinity]))
        let error = try #require(throws: StorageError.self) { try shape.flush() }
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    @Test func aNestedDictionaryKeyInTheDecodingPathIsNotInTheError() throws {
        let hidden = "secret-\(UInt64.random(in: 0...UInt64.max))"
        let storage = MemoryStorage()
        try storage.save(Data(#"{"a": {"\#(hidden)": {"x": "ten"}}}"#.utf8), key: "s9.decode.nested")
        let nested = StateContainer([String: [String: [String: Int]]](), key: "s9.decode.nested", storage: storage)
        let error = try #require(nested.storageError?.value)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    @Test func anEnumPayloadThatDoesNotDecodeIsNotInTheError() throws {
        let hidden = "secret-\(UInt64.random(in: 0...UInt64.max))"
        let storage = MemoryStorage()
        try storage.save(Data(#"{"tagged": {"_0": {"\#(hidden)": "x"}}}"#.utf8), key: "s9.decode.enum")
        let shape = StateContainer(Shape.circle(radius: 1), key: "s9.decode.enum", storage: storage)
        let error = try #require(shape.storageError?.value)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }

    @Test func anUnknownEnumCaseFromTheDataIsNotInTheError() throws {
        let hidden = "secret\(UInt64.random(in: 0...UInt64.max))"
        let storage = MemoryStorage()
        try storage.save(Data(#"{"\#(hidden)": {}}"#.utf8), key: "s9.decode.case")
        let shape = StateContainer(Shape.circle(radius: 1), key: "s9.decode.case", storage: storage)
        let error = try #require(shape.storageError?.value)
        for text in error.everyText { #expect(!text.contains(hidden), "\(text)") }
    }
}
