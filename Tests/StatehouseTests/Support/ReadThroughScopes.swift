import Statehouse

struct ReadThroughMid: Equatable, Sendable {
    var leaf = 0
}

struct ReadThroughTree: Equatable, Sendable {
    var mid = ReadThroughMid()
    var maybe: ReadThroughMid? = ReadThroughMid()
}

enum ReadThroughAction: Equatable, Sendable {
    case tick
}

func makeReadThroughStore() -> Store<ReadThroughTree, ReadThroughAction> {
    Store(initialState: ReadThroughTree()) { (state: inout ReadThroughTree, _: ReadThroughAction) in
        state.mid.leaf += 1
        state.maybe?.leaf += 1
    }
}

/// The four kinds of scoped store over one root, each reading a counter that every `.tick` increments.
struct ReadThroughScopes: Sendable {
    let root: Store<ReadThroughTree, ReadThroughAction>
    let plain: Store<ReadThroughMid, ReadThroughAction>
    let scopeOfScope: Store<Int, ReadThroughAction>
    let ifLet: Store<ReadThroughMid, ReadThroughAction>
    let scopeOfIfLet: Store<Int, ReadThroughAction>

    init() {
        root = makeReadThroughStore()
        plain = root.scope(state: \.mid, action: { $0 })
        scopeOfScope = plain.scope(state: \.leaf, action: { $0 })
        ifLet = root.scope(ifLet: \.maybe, action: { $0 })!
        scopeOfIfLet = ifLet.scope(state: \.leaf, action: { $0 })
    }

    /// Each scope's counter, read through its `state`, by name.
    var readers: [(name: String, read: @Sendable () -> Int)] {
        let (plain, scopeOfScope, ifLet, scopeOfIfLet) = (plain, scopeOfScope, ifLet, scopeOfIfLet)
        return [
            ("plain scope", { plain.state.leaf }),
            ("scope of a scope", { scopeOfScope.state }),
            ("ifLet scope", { ifLet.state.leaf }),
            ("scope of an ifLet scope", { scopeOfIfLet.state }),
        ]
    }

    /// Subscribes to every scope with `listener(name, value, state read in the listener)`.
    func subscribeAll(_ listener: @escaping @Sendable (String, Int, Int) -> Void) -> [SubscriptionToken] {
        let (plain, scopeOfScope, ifLet, scopeOfIfLet) = (plain, scopeOfScope, ifLet, scopeOfIfLet)
        return [
            plain.subscribe(\.leaf) { listener("plain scope", $0, plain.state.leaf) },
            scopeOfScope.subscribe(\.self) { listener("scope of a scope", $0, scopeOfScope.state) },
            ifLet.subscribe(\.leaf) { listener("ifLet scope", $0, ifLet.state.leaf) },
            scopeOfIfLet.subscribe(\.self) { listener("scope of an ifLet scope", $0, scopeOfIfLet.state) },
        ]
    }
}

