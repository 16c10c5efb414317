// A program with an inspected store and containers, for the inspector's browser and memory tests and to try the
// page by hand: `swift run --package-path Inspector StatehouseInspectorDemo`, then open the URL it prints.
//
// It prints `url URL`, then reads commands, one per line, and answers each with `ok`:
//   add TITLE · toggle INDEX · password TEXT · label GROUP NAME VALUE · theme TEXT · key TEXT · flood COUNT (counts) ·
//   adds COUNT (to-dos) · rss · quit
// Its arguments, both optional: the log's capacity, and a page's buffer (in events).
import Foundation
import Statehouse
import StatehouseInspector

struct Todo: Codable, Sendable, Equatable {
    var title: String
    var done = false
}

struct Account: Codable, Sendable, Equatable {
    var user = "ada"
    /// Redacted in the inspector: never on the page.
    var password = "initial-secret"
}

struct AppState: Codable, Sendable, Equatable {
    var todos: [Todo] = []
    var account = Account()
    var counter = 0
    /// Keys the app does not choose (`__proto__` among them): the page shows them as data.
    var labels: [String: [String: Int]] = [:]
}

enum AppAction: Codable, Sendable, Equatable {
    case add(String)
    case toggle(Int)
    case setPassword(password: String)
    case count
    case label(group: String, name: String, value: Int)
}

func reduce(_ state: inout AppState, _ action: AppAction) {
    switch action {
    case .add(let title): state.todos.append(Todo(title: title))
    case .toggle(let index) where state.todos.indices.contains(index): state.todos[index].done.toggle()
    case .toggle: break
    case .setPassword(let password): state.account.password = password
    case .count: state.counter += 1
    case .label(let group, let name, let value): state.labels[group, default: [:]][name] = value
    }
}

/// Writes a line to the standard output at once: the test reading it waits for it.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The resident set size, in KiB, from /proc.
func residentKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let capacity = arguments.first ?? 10_000
let bufferPerPage = arguments.dropFirst().first ?? 10_000
let store = Store(initialState: AppState(), reducer: reduce)
let theme = StateContainer("light", key: "theme")
let apiKey = StateContainer("key-initial", key: "apiKey")
let inspector = try await Inspector.start(capacity: capacity, bufferPerPage: bufferPerPage)
// The state's `password` and the payload of `setPassword(password:)` share the name: one rule redacts both, and a
// redacted action is still one of `AppAction`'s, so an export imports again.
inspector.attach(store, name: "app", redacting: .fields("password"), allowsJumps: true)
inspector.attach(theme)
inspector.attach(apiKey, values: .redacted)
say("url \(inspector.url.absoluteString)")

while let line = readLine() {
    let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
    let argument = parts.count > 1 ? parts[1] : ""
    switch parts.first ?? "" {
    case "add": store.dispatch(.add(argument))
    case "toggle": store.dispatch(.toggle(Int(argument) ?? 0))
    case "password": store.dispatch(.setPassword(password: argument))
    case "label":
        let words = argument.split(separator: " ").map(String.init)
        if words.count == 3 { store.dispatch(.label(group: words[0], name: words[1], value: Int(words[2]) ?? 0)) }
    case "theme": theme.modify(argument)
    case "key": apiKey.modify(argument)
    case "flood": for _ in 0..<(Int(argument) ?? 0) { store.dispatch(.count) }
    case "adds": for index in 0..<(Int(argument) ?? 0) { store.dispatch(.add("item \(index)")) }
    case "rss": say("rss \(residentKiB())")
    case "quit":
        await inspector.stop()
        exit(0)
    default: say("unknown command: \(line)")
    }
    say("ok")
}
await inspector.stop()
