import Foundation
import Testing

@testable import StatehouseTesting

@Suite("Values written as code")
struct ValueDescriptionTests {
    enum Inner: Sendable { case tap, typed(String) }
    enum Outer: Sendable {
        case child(Inner)
        case row(id: Int, action: Inner)
        case none
    }

    struct Profile: Sendable {
        var name = "Ada"
        var age: Int? = nil
        var tags: Set<String> = ["b", "a"]
        var scores: [String: Int] = ["z": 1, "m": 2]
    }

    @Test func actionsOnOneLine() {
        #expect(ValueDescription.line(Outer.child(.tap)) == ".child(.tap)")
        #expect(ValueDescription.line(Outer.child(.typed("x\"y"))) == #".child(.typed("x\"y"))"#)
        #expect(ValueDescription.line(Outer.row(id: 3, action: .tap)) == ".row(id: 3, action: .tap)")
        #expect(ValueDescription.line(Outer.none) == ".none")
        #expect(ValueDescription.line(()) == "()")
        #expect(ValueDescription.line(Optional<Int>.none as Any) == "nil")
        #expect(ValueDescription.line(UUID(0)) == "00000000-0000-0000-0000-000000000000")
    }

    @Test func statesStableAndBrokenIntoLinesWhenLong() {
        #expect(
            ValueDescription.line(Profile()) == #"Profile(name: "Ada", age: nil, tags: ["a", "b"], scores: ["m": 2, "z": 1])"#
        )
        #expect(
            ValueDescription.lines(Profile()) == """
                Profile(
                  name: "Ada",
                  age: nil,
                  tags: ["a", "b"],
                  scores: ["m": 2, "z": 1]
                )
                """
        )
        #expect(ValueDescription.lines([1, 2]) == "[1, 2]")
    }
}
