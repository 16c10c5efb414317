import Synchronization

/// The cancellation state of one cancellable effect (``Effect/cancellable(id:cancelInFlight:)``), shared by
/// everything it does: its tasks and the actions it sends.
///
/// An action an effect sends carries the handle to the store, which checks it where the action is applied, on the
/// store's processor, in order with `.cancel(id:)`: so once a reducer's `.cancel(id:)` has run, no action of that
/// effect is reduced — not one it sends later from a callback outside its task, and not one it had queued already.
/// (Checking `Task.isCancelled` where the action is sent asked the wrong task: the one of whatever thread sent it.)
///
/// A handle stays findable by its id while it has work outstanding — its start, every live copy of a ``Send`` for it
/// (see ``EffectLease``), its queued actions, and the handles nested in it — so that cancelling by id reaches
/// actions an effect queued just before it finished, and a `Send` it kept for a callback. Nothing can send for it
/// once that work is done, so reaching zero is final.
@usableFromInline
package final class EffectHandle: Sendable {
    private let parent: EffectHandle?
    private let cancelled = Atomic<Bool>(false)
    /// Work outstanding; 1 for the start, which ends once every operation of the effect has been started.
    private let outstanding = Atomic<Int>(1)
    private let done = Atomic<Bool>(false)
    private let whenDone: @Sendable (EffectHandle) -> Void

    /// - Parameters:
    ///   - parent: The cancellable effect this one is nested in: cancelling it cancels this one too.
    ///   - whenDone: Called once, when no work is outstanding.
    init(parent: EffectHandle?, whenDone: @escaping @Sendable (EffectHandle) -> Void) {
        self.parent = parent
        self.whenDone = whenDone
        parent?.beginWork()
    }

    /// Whether this effect, or one it is nested in, was cancelled.
    @usableFromInline
    package var isCancelled: Bool {
        cancelled.load(ordering: .acquiring) || parent?.isCancelled == true
    }

    /// Whether this effect is `other` or nested in it.
    func isSelfOrNested(in other: EffectHandle) -> Bool {
        self === other || parent?.isSelfOrNested(in: other) == true
    }

    func cancel() {
        cancelled.store(true, ordering: .releasing)
    }

    /// Counts a task or a sent action until ``endWork()``.
    @usableFromInline
    package func beginWork() {
        outstanding.add(1, ordering: .relaxed)
    }

    /// Ends what ``beginWork()`` (or the start) began.
    @usableFromInline
    package func endWork() {
        guard outstanding.subtract(1, ordering: .acquiringAndReleasing).newValue == 0,
            !done.exchange(true, ordering: .acquiringAndReleasing)
        else { return }
        whenDone(self)
        parent?.endWork()
    }
}

/// Counts as work of a cancellable effect for as long as it lives: a ``Send`` holds one, shared by all its copies,
/// so the effect stays cancellable by id while anything can still send for it.
@usableFromInline
package final class EffectLease: Sendable {
    @usableFromInline let handle: EffectHandle

    init(_ handle: EffectHandle) {
        self.handle = handle
        handle.beginWork()
    }

    deinit {
        handle.endWork()
    }
}
