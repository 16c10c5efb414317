/// The throttle windows of an ``EffectRunner``, by id: which throttled effect runs now, which is kept for the end of
/// the window, which is dropped. The logic without the locking or the tasks: the runner calls these under its lock
/// and does what they return outside it.
///
/// `Pending` is what the runner needs to start a kept effect later; a value of it is returned (never discarded
/// here) when it is dropped, so that the runner releases it outside its lock.
struct EffectThrottles<Pending: Sendable>: Sendable {
    private struct Window: Sendable {
        var opened: EffectWindow.Opened
        /// The effect to run at the window's end; a timer is running while there is one.
        var pending: Pending?
        /// Tells this window's timer from that of a window that replaced it under the same id.
        var generation: UInt64
        /// The ids of the cancellable effects the throttled effects of this window are nested in (an `ifLet`
        /// child's, say): cancelling one ends the window at once, as cancelling the throttle's own id does. Left to
        /// the timer, which sees its cancellation later, the window would outlive them, hold back the next effect
        /// throttled with the id, and drop it when the timer ended.
        var nestedIn: Set<AnyHashableSendable>
    }

    /// What to do with an effect throttled now.
    enum Arrival {
        /// Run it: it opened a window.
        case runNow
        /// It is kept for the end of the window; start a timer for that end with `generation` if given (it is the
        /// first effect kept in this window). `replaced` is the effect it replaced, dropped.
        case kept(timer: (generation: UInt64, window: EffectWindow.Opened)?, replaced: Pending?)
        /// It is dropped (a window keeps its first).
        case dropped(Pending)
    }

    private var windows: [AnyHashableSendable: Window] = [:]
    private var nextGeneration: UInt64 = 0

    /// An effect throttled with `id`, nested in the cancellable effects `nestedIn`, comes; `window` opens a new
    /// window if none is open.
    ///
    /// Windows whose end passed with nothing kept stay here until their id is used again (or cancelled): as many
    /// as the app has throttle ids.
    mutating func arrive(
        _ pending: Pending,
        id: AnyHashableSendable,
        window: EffectWindow,
        latest: Bool,
        nestedIn: Set<AnyHashableSendable> = []
    ) -> Arrival {
        // A window with an effect kept stays open until its timer runs it, even if the clock reached its end.
        guard var current = windows[id], current.pending != nil || current.opened.isOpen() else {
            windows[id] = Window(opened: window.open(), pending: nil, generation: makeGeneration(), nestedIn: nestedIn)
            return .runNow
        }
        current.nestedIn.formUnion(nestedIn)
        guard let kept = current.pending else {
            current.pending = pending
            windows[id] = current
            return .kept(timer: (current.generation, current.opened), replaced: nil)
        }
        guard latest else {
            windows[id] = current
            return .dropped(pending)
        }
        current.pending = pending
        windows[id] = current
        return .kept(timer: nil, replaced: kept)
    }

    /// The timer of window `generation` of `id` ended: returns the effect to run now, which opens a new window
    /// (`window`), or `nil`.
    mutating func windowEnded(id: AnyHashableSendable, generation: UInt64, window: EffectWindow) -> Pending? {
        guard let current = windows[id], current.generation == generation, let pending = current.pending else {
            return nil
        }
        // The effect kept runs in the new window: it stays nested where the window's effects were.
        windows[id] = Window(
            opened: window.open(), pending: nil, generation: makeGeneration(), nestedIn: current.nestedIn
        )
        return pending
    }

    /// The timer of window `generation` of `id` was cancelled: ends that window; returns its kept effect, dropped.
    mutating func timerCancelled(id: AnyHashableSendable, generation: UInt64) -> Pending? {
        guard let current = windows[id], current.generation == generation else { return nil }
        windows[id] = nil
        return current.pending
    }

    /// Ends the window of `id` (``Effect/cancel(id:)``) and those whose effects are nested in `id`; returns their
    /// kept effects, dropped.
    mutating func cancel(id: AnyHashableSendable) -> [Pending] {
        var dropped: [Pending] = []
        for (windowID, window) in windows where windowID == id || window.nestedIn.contains(id) {
            windows[windowID] = nil
            if let pending = window.pending { dropped.append(pending) }
        }
        return dropped
    }

    /// Ends every window; returns the kept effects, dropped.
    mutating func removeAll() -> [Pending] {
        defer { windows = [:] }
        return windows.values.compactMap(\.pending)
    }

    private mutating func makeGeneration() -> UInt64 {
        defer { nextGeneration += 1 }
        return nextGeneration
    }
}
