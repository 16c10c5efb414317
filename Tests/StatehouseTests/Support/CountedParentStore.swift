import Statehouse
import Synchronization

/// Counts how many times something runs: a key path's getter or a selector.
final class RunCount: Sendable {
    private let atomic = Atomic<Int>(0)

    var value: Int { atomic.load(ordering: .sequentiallyConsistent) }

    func count() {
        atomic.add(1, ordering: .sequentiallyConsistent)
    }
}

/// A parent state whose child is read through computed properties that count their runs: the scopes' key paths.
struct CountedParent: Equatable, Sendable {
    var child = Counter()
    var detail: Counter?
    var other = 0
    let childReads = RunCount()
    let countReads = RunCount()

    /// `child`, counting the runs of `\.countedChild`.
    var countedChild: Counter {
        childReads.count()
        return child
    }

    /// `child.count`, counting the runs of `\.countedCount`.
    var countedCount: Int {
        countReads.count()
        return child.count
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.child == rhs.child && lhs.detail == rhs.detail && lhs.other == rhs.other
    }
}

enum CountedParentAction: Equatable, Sendable {
    case child(CounterAction)
    case detail(CounterAction)
    case setDetail(Counter?)
    case other
}

func makeCountedParentStore() -> Store<CountedParent, CountedParentAction> {
    Store(initialState: CountedParent()) { (state: inout CountedParent, action: CountedParentAction) -> Void in
        switch action {
        case .child(let action): counterReducer(&state.child, action)
        case .detail(let action):
            if var detail = state.detail {
                counterReducer(&detail, action)
                state.detail = detail
            }
        case .setDetail(let detail): state.detail = detail
        case .other: state.other += 1
        }
    }
}
