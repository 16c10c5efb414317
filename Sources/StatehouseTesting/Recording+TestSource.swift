import Foundation
import Statehouse

extension Recording where State: Codable & Equatable, Action: Codable & Equatable {
    /// The Swift source of a Swift Testing test that replays this recording through ``TestStore``: one `send` per
    /// action dispatched and one `receive` per action an effect sent back, each asserting the whole state the action
    /// led to, then `finish()`.
    ///
    /// ```swift
    /// store.startRecording()
    /// …                                           // the session: a user clicking, a bug reproduced
    /// let source = try store.stopRecording()!.testSource(reducer: appReducer, writtenAs: "appReducer",
    ///                                                    imports: ["MyApp"])
    /// try source.write(to: testsFolder.appending(path: "ReplaysTheBugSession.swift"), atomically: true, encoding: .utf8)
    /// ```
    ///
    /// The test compiles as it is in a test target that can see the types, and passes against the reducer that made
    /// the recording; when the reducer's behaviour changes, it fails at the step that differs, with the action and a
    /// diff of the state. States and actions are written as JSON (the types' own `Codable` form, so the test needs
    /// nothing else from them), each step with the action written as code in a comment.
    ///
    /// Effects run for real in the test, as in ``TestStore``: give `writtenAs` a reducer whose environment is the
    /// test's (a ``ManualClock``, fixed ids) when the recorded session's depended on time or a network.
    ///
    /// - Parameters:
    ///   - name: The test function's name.
    ///   - reducer: The reducer that made the recording: it computes the state after each action.
    ///   - reducerExpression: How the test refers to that reducer: any expression `TestStore(initialState:reducer:)` takes.
    ///   - imports: Modules to import, as `@testable import` (the app's module, for its internal types).
    /// - Throws: ``TestSourceError`` when a type cannot be named from a test file, a value does not encode, or `name`
    ///   is not an identifier.
    public func testSource(
        named name: String = "replaysTheRecordedSession",
        reducer: Reducer<State, Action>,
        writtenAs reducerExpression: String,
        imports: [String] = []
    ) throws(TestSourceError) -> String {
        guard let first = name.first, first.isLetter || first == "_", name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
        else { throw .invalidTestName(name) }
        let stateType = try Self.sourceName(of: State.self)
        let actionType = try Self.sourceName(of: Action.self)
        var state = initialState
        var lines = [
            "// A session recorded by Statehouse (\(actions.count) actions), replayed through TestStore: each step",
            "// asserts the state its action led to. Made by Recording.testSource; make it again rather than edit it.",
            "",
            "import Foundation",
            "import StatehouseTesting",
            "import Testing",
        ]
        lines += imports.sorted().map { "@testable import \($0)" }
        lines += [
            "",
            "@Test func \(name)() async throws {",
            "    func decoded<Value: Decodable>(_ type: Value.Type, _ json: String) throws -> Value {",
            "        try JSONDecoder().decode(type, from: Data(json.utf8))",
            "    }",
            "    let store = TestStore(",
            "        initialState: try decoded(\(stateType).self, \(try Self.literal(state))),",
            "        reducer: \(reducerExpression)",
            "    )",
        ]
        for (index, recorded) in actions.enumerated() {
            let before = state
            _ = reducer.reduce(&state, recorded.action)
            let step = "\(index + 1)\(recorded.sentByEffect ? ", sent by an effect" : "")"
            // Every line break gets the comment's prefix: a value's text (a name a user typed) could hold a carriage
            // return, which ends a `//` comment too, and what follows it would be code in the test.
            let comment = described(recorded.action).split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            lines.append("    // \(step): " + comment.joined(separator: "\n    //   "))
            let call = recorded.sentByEffect ? "receive" : "send"
            let action = "try decoded(\(actionType).self, \(try Self.literal(recorded.action)))"
            if state == before {
                lines.append("    await store.\(call)(\(action))")
            } else {
                lines += [
                    "    await store.\(call)(\(action)) {",
                    "        $0 = try decoded(\(stateType).self, \(try Self.literal(state)))",
                    "    }",
                ]
            }
        }
        lines += ["    await store.finish()", "}", ""]
        return lines.joined(separator: "\n")
    }

    /// `type`'s name as a test file writes it: with its module, which the test imports.
    private static func sourceName(of type: Any.Type) throws(TestSourceError) -> String {
        let name = String(reflecting: type)
        // A type declared inside a function, or private to a file, has no name outside it.
        guard !name.contains("(") else { throw .unnameableType(name) }
        return name
    }

    /// `value` as a raw string literal of its JSON, with enough `#`s that nothing in it ends the literal.
    private static func literal(_ value: some Encodable) throws(TestSourceError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json: String
        do {
            json = String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw .unencodable(String(describing: error))
        }
        var hashes = "#"
        while json.contains("\"" + hashes) || json.contains("\\" + hashes) { hashes += "#" }
        return hashes + "\"" + json + "\"" + hashes
    }
}

/// Why `Recording.testSource(named:reducer:writtenAs:imports:)` could not write a test.
public enum TestSourceError: Error, Equatable, CustomStringConvertible {
    /// The state or action type cannot be named from another file (declared in a function, or `private`).
    case unnameableType(String)
    /// A state or action did not encode to JSON.
    case unencodable(String)
    /// The test's name is not a Swift identifier.
    case invalidTestName(String)

    public var description: String {
        switch self {
        case .unnameableType(let name):
            "\(name) cannot be named from a test file: declare it at the top level of a module or in a type, not "
                + "inside a function or as private."
        case .unencodable(let reason):
            "A recorded value did not encode to JSON: \(reason)"
        case .invalidTestName(let name):
            "\"\(name)\" cannot name a test function: use letters, digits and _, not starting with a digit."
        }
    }
}
