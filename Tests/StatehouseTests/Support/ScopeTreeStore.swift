import Statehouse

// A three-level state (root, mid, leaf) with an optional mid, for the tests of scoped stores reading their part
// through their parent.

struct ARLeaf: Equatable, Sendable {
    var count = 0
    var label = "L0"
}

struct ARMid: Equatable, Sendable {
    var leaf = ARLeaf()
    var other = 0
    /// A computed part that reads other fields of the state.
    var mirrored: ARLeaf { ARLeaf(count: leaf.count, label: "M" + leaf.label) }
}

struct ARRoot: Equatable, Sendable {
    var mid = ARMid()
    var opt: ARMid? = nil
    var total = 0
    var computedMid: ARMid { var m = mid; m.other = total; return m }
}

enum ARLeafAction: Sendable { case bump }
enum ARMidAction: Sendable { case leaf(ARLeafAction), other }
enum ARAction: Sendable {
    case bump
    case setOpt(ARMid?)
    case mid(ARMidAction)
    case optMid(ARMidAction)
}

func arReduce(_ state: inout ARRoot, _ action: ARAction) {
    switch action {
    case .bump, .mid(.leaf(.bump)), .optMid(.leaf(.bump)):
        state.total += 1
        state.mid.leaf.count = state.total
        state.mid.leaf.label = "L\(state.total)"
        if state.opt != nil {
            state.opt!.leaf.count = state.total
            state.opt!.leaf.label = "L\(state.total)"
        }
    case .setOpt(let opt):
        state.opt = opt
    case .mid(.other), .optMid(.other):
        state.mid.other += 1
    }
}

func arStore(middleware: [Middleware<ARRoot, ARAction>] = []) -> Store<ARRoot, ARAction> {
    Store(initialState: ARRoot(), reducer: { (state: inout ARRoot, action: ARAction) in arReduce(&state, action) },
          middleware: middleware)
}
