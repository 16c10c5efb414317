import Testing
import Statehouse
import StatehouseTestSupport

// The README's two examples: each does what the README's comments say its lines print.

@Suite("The README's example")
struct ReadmeExampleTests {
    @Test func tenLinesDoWhatTheCommentsSay() async {
        let printed = Recorder<String>()
        let theme = StateContainer("blue", key: "readme.themeColor")
        let token = theme.observe(initial: true) { printed.append("theme: \($0)") }
        theme.modify("red")
        theme ~> "green"
        let length = theme.update { $0 += "!"; return $0.count }
        theme.bindAndFire(name: "Header.title") { printed.append("title: \($0)") }
        for await value in theme.values { printed.append(value); break }
        token.cancel()
        #expect(length == 6)
        #expect(printed.elements == [
            "theme: blue", "theme: red", "theme: green", "theme: green!", "title: green!", "green!",
        ])
    }
}

@Suite("The README's store example")
struct ReadmeStoreExampleTests {
    @Test func tenLinesDoWhatTheCommentsSay() {
        let printed = Recorder<String>()
        let store = Store(initialState: Counter()) { (state: inout Counter, action: CounterAction) in
            switch action { case .increment: state.count += 1; case .rename(let n): state.name = n; case .set(let v): state.count = v }
        }
        let sub = store.subscribe(\.count) { printed.append("count: \($0)") }
        store.dispatch(.increment)
        store.dispatch(.rename("x"))
        let child = store.scope(state: \.name, action: CounterAction.rename)
        child.dispatch("child")
        #expect(printed.elements == ["count: 0", "count: 1"])
        #expect(store.state.name == "child")
        sub.cancel()
    }
}
