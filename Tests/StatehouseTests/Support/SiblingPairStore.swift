import Statehouse

/// Two fields a parent store sets together, each shown by a scope of its own.
struct SiblingPair: Equatable, Sendable {
    var a = 0
    var b = 0
}

enum SiblingPairAction: Sendable {
    case setBoth(Int)
}

func makePairStore() -> Store<SiblingPair, SiblingPairAction> {
    Store(initialState: SiblingPair()) { (state: inout SiblingPair, action: SiblingPairAction) in
        switch action {
        case .setBoth(let value):
            state.a = value
            state.b = value
        }
    }
}
