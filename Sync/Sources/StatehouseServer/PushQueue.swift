import Synchronization

/// Work that waits to be taken in groups by one drainer at a time: whoever adds to an idle queue becomes its drainer,
/// and takes everything that waits until nothing does.
final class PushQueue<Element: Sendable>: Sendable {
    private let state = Mutex<(waiting: [Element], draining: Bool)>(([], false))

    /// Adds `element`; returns whether the caller must start draining (nobody else is).
    func add(_ element: Element) -> Bool {
        state.withLock { state in
            state.waiting.append(element)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
    }

    /// Everything that waits, in the order it came; empty once nothing does, and then the drainer is done unless it
    /// says it `keepsDraining` (it holds work of its own still): the next ``add(_:)`` starts another.
    func takeAll(keepsDraining: Bool = false) -> [Element] {
        state.withLock { state in
            let taken = state.waiting
            state.waiting = []
            if taken.isEmpty, !keepsDraining { state.draining = false }
            return taken
        }
    }

    /// How many wait, for tests that need a group formed.
    var count: Int {
        state.withLock { $0.waiting.count }
    }
}
