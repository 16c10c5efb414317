import Statehouse
import StatehouseTesting

enum SearchAction: Equatable, Sendable {
    case search(String)
    case results(String)
    case cancel
    case ping
    case pong
    case both
}

struct Search: Equatable, Sendable {
    var query = ""
    var results: [String] = []
    var pongs = 0
}

/// A reducer with every kind of effect. The search waits `delay` on `clock` before it sends its results, so that a
/// test decides when that happens (a search cancelled first still tries to send, and must be ignored).
func searchReducer(
    clock: ManualClock = ManualClock(), delay: Duration = .zero
) -> @Sendable (inout Search, SearchAction) -> Effect<SearchAction> {
    { state, action in
        switch action {
        case .search(let query):
            state.query = query
            return .run { send in
                try? await clock.sleep(for: delay)
                send(.results(query))
            }
            .cancellable(id: "search", cancelInFlight: true)
        case .results(let query):
            state.results.append(query)
            return .none
        case .cancel:
            return .cancel(id: "search")
        case .ping:
            return .send(.pong)
        case .pong:
            state.pongs += 1
            return .none
        case .both:
            return .merge(.send(.pong), .run { send in send(.pong) })
        }
    }
}
