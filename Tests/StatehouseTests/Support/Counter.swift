import Statehouse

struct Counter: Equatable, Sendable, Codable {
    var count = 0
    var name = ""
}

enum CounterAction: Equatable, Sendable, Codable {
    case increment
    case set(Int)
    case rename(String)
}

func counterReducer(_ state: inout Counter, _ action: CounterAction) {
    switch action {
    case .increment: state.count += 1
    case .set(let value): state.count = value
    case .rename(let name): state.name = name
    }
}

func makeCounterStore(_ initial: Counter = Counter(), middleware: [Middleware<Counter, CounterAction>] = []) -> Store<Counter, CounterAction> {
    Store(initialState: initial, reducer: counterReducer, middleware: middleware)
}
