import Statehouse

struct TwoCounters: Equatable, Sendable {
    var a = 0
    var b = 0
    var holds = 0
}

enum TwoCountersAction: Sendable { case a, b, hold }

func twoCountersReducer(_ state: inout TwoCounters, _ action: TwoCountersAction) {
    switch action {
    case .a: state.a += 1
    case .b: state.b += 1
    case .hold: state.holds += 1
    }
}
