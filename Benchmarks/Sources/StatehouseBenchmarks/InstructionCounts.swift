import Statehouse

/// The hot paths whose instructions `Benchmarks/instructions.sh` counts, each beside its floor: the same work done
/// the plainest way, with none of Statehouse's guarantees.
///
/// Times on a shared machine move with its load; instructions do not. The script runs one operation `count` times
/// under callgrind for two counts and divides the difference of the instructions by the difference of the counts,
/// so that start-up and set-up cancel out.
enum HotPath: String, CaseIterable {
    case modify, modifyFloor = "modify-floor"
    case dispatch, dispatchFloor = "dispatch-floor"
    /// A dispatch that changes nothing 100 subscribers on 10 key paths watch: the groups' comparisons.
    case dispatchWatched = "dispatch-watched", dispatchWatchedFloor = "dispatch-watched-floor"
    case subscribeCancel = "subscribe-cancel", subscribeCancelFloor = "subscribe-cancel-floor"
    case storeSubscribe = "store-subscribe", storeSubscribeFloor = "store-subscribe-floor"
    case scopeRead = "scope-read", scopeReadFloor = "scope-read-floor"

    /// Sets up, then does the operation `count` times.
    func run(count: Int) {
        let sink = ObserverSink()
        switch self {
        case .modify: repeatWrite(StatehouseContender.self, count: count)
        case .modifyFloor: repeatWrite(MutexFloor.self, count: count)
        case .subscribeCancel: repeatSubscribeCancel(StatehouseContender.self, count: count, sink: sink)
        case .subscribeCancelFloor: repeatSubscribeCancel(MutexFloor.self, count: count, sink: sink)
        case .dispatch:
            let store = Store(initialState: Fields(), reducer: click)
            for index in 0..<count { store.dispatch(index) }
        case .dispatchFloor:
            let store = NaiveStore(initialState: Fields(), reducer: click)
            for index in 0..<count { store.dispatch(index) }
        case .dispatchWatched:
            let store = Store(initialState: Fields(), reducer: click)
            let tokens = (0..<100).map { store.subscribe(watchedFields[$0 % watchedFields.count]) { sink.total &+= $0 } }
            for index in 0..<count { store.dispatch(index) }
            withExtendedLifetime(tokens) {}
        case .dispatchWatchedFloor:
            let store = NaiveStore(initialState: Fields(), reducer: click)
            for index in 0..<100 { _ = store.subscribe(watchedFields[index % watchedFields.count]) { sink.total &+= $0 } }
            for index in 0..<count { store.dispatch(index) }
        case .storeSubscribe:
            // With 100 subscribers already there, as the timed row has.
            let store = Store(initialState: Fields(), reducer: click)
            let others = (0..<100).map { store.subscribe(watchedFields[$0 % watchedFields.count]) { sink.total &+= $0 } }
            for _ in 0..<count { store.subscribe(\.f0) { sink.total &+= $0 }.cancel() }
            withExtendedLifetime(others) {}
        case .storeSubscribeFloor:
            let store = NaiveStore(initialState: Fields(), reducer: click)
            for index in 0..<100 { _ = store.subscribe(watchedFields[index % watchedFields.count]) { sink.total &+= $0 } }
            for _ in 0..<count { store.unsubscribe(store.subscribe(\.f0) { sink.total &+= $0 }) }
        case .scopeRead:
            let store = Store(initialState: Fields(), reducer: click)
            let scope = store.scope(state: \.f0, action: { (action: Int) in action })
            for _ in 0..<count { sink.total &+= scope.state }
        case .scopeReadFloor:
            let store = NaiveStore(initialState: Fields(), reducer: click)
            for _ in 0..<count { sink.total &+= store.state.f0 }
        }
    }

    private func repeatWrite<Library: Contender>(_ library: Library.Type, count: Int) {
        let subject = Library.make()
        for index in 0..<count { Library.write(subject, index) }
    }

    private func repeatSubscribeCancel<Library: Contender>(_ library: Library.Type, count: Int, sink: ObserverSink) {
        let subject = Library.make()
        for _ in 0..<count { Library.cancel(escapingSubscription(Library.self, subject, sink)) }
    }

    /// Subscribes in a function of its own, whose result escapes it as the token `observe` returns to a user does.
    /// Inlined into the loop, the token would not escape, the optimizer could put it on the stack, and the count
    /// would miss its allocation. The floor's subscription goes through the same function, so it is not inlined
    /// either.
    @inline(never)
    private func escapingSubscription<Library: Contender>(
        _ library: Library.Type, _ subject: Library.Subject, _ sink: ObserverSink
    ) -> Library.Subscription {
        Library.subscribe(subject, sink)
    }
}
