import Synchronization

/// Runs the effects of a store (or a test store): tasks for `.run`, actions for `.send`, and the bookkeeping of
/// cancellation ids, concatenations and throttle windows. Knows nothing of reducers; what effects send goes to the
/// ``Send`` each effect is started with.
@usableFromInline
package final class EffectRunner<Action: Sendable>: Sendable {
    private struct Running: Sendable {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        /// The effect each task works for, if it was started for one: a cancel in flight spares the tasks of the
        /// effect starting it.
        var taskEffects: [UInt64: EffectHandle] = [:]
        var ids: [AnyHashableSendable: Set<UInt64>] = [:]
        /// The cancellable effects with work outstanding, by id; under `nil`, the tasks started outside any.
        var handles: [AnyHashableSendable?: [ObjectIdentifier: EffectHandle]] = [:]
        var nextTask: UInt64 = 0
        var throttles = EffectThrottles<Throttled>()
    }

    /// A throttled effect kept for the end of its window, with what it needs to start then. Its `send` holds a
    /// lease on the effect it is nested in, keeping that one cancellable by id meanwhile; so a `Throttled` must be
    /// released outside the lock (the lease's end takes it).
    private struct Throttled: Sendable {
        let effect: Effect<Action>
        let ids: Set<AnyHashableSendable>
        let send: Send<Action>
    }

    private typealias Tasks = [Task<Void, Never>]

    private let running = Locked(Running())

    @usableFromInline
    package init() {}

    /// Starts `effect`; the actions it sends go to `send`, from any thread.
    @usableFromInline
    package func start(_ effect: Effect<Action>, send: Send<Action>) {
        start(effect.operations, ids: [], origin: nil, send: send)
    }

    /// The number of tasks running now: `.run` operations, concatenations waiting to start their next part,
    /// throttle windows with an effect kept.
    package var runningCount: Int {
        running.withLock { $0.tasks.count }
    }

    /// Waits until no effect is running, including effects started by actions that running effects send.
    package func finish() async {
        while let task = running.withLock({ $0.tasks.first?.value }) {
            await task.value
        }
    }

    /// Cancels every running effect.
    package func cancelAll() {
        let (tasks, throttled) = running.withLock { running in
            let throttled = running.throttles.removeAll()
            defer { running = Running(nextTask: running.nextTask) }
            // Marked under the lock, where a task is spawned: one spawned after this finds its effect cancelled.
            for handles in running.handles.values { handles.values.forEach { $0.cancel() } }
            return (Array(running.tasks.values), throttled)
        }
        tasks.forEach { $0.cancel() }
        withExtendedLifetime(throttled) {}
    }

    /// Cancels the effects marked `id`: their tasks, every action they sent that was not applied yet, and the
    /// throttle windows of `id` and of the throttles nested in it.
    ///
    /// - Parameter sparing: The effect cancelling in flight (``Effect/cancellable(id:cancelInFlight:)``): it, and the
    ///   effects it is nested in, are not in flight but starting, even when they are marked `id` too.
    package func cancel(id: AnyHashableSendable, sparing starting: EffectHandle? = nil) {
        let (tasks, throttled) = running.withLock { running in
            let handles = running.handles.removeValue(forKey: id) ?? [:]
            // Marked under the lock, where a task is spawned: one spawned after this finds its effect cancelled, and
            // one spawned before is among the tasks cancelled here.
            for (key, handle) in handles {
                if let starting, starting.isSelfOrNested(in: handle) {
                    running.handles[id, default: [:]][key] = handle
                } else {
                    handle.cancel()
                }
            }
            // A task goes with its effect: those of the spared effects (and of effects nested in them under other
            // ids) stay, marked `id` still; a task started for no effect (a throttle's timer) goes.
            var tasks: [Task<Void, Never>] = []
            for number in running.ids.removeValue(forKey: id) ?? [] {
                if let effect = running.taskEffects[number], !effect.isCancelled {
                    running.ids[id, default: []].insert(number)
                } else if let task = running.tasks[number] {
                    tasks.append(task)
                }
            }
            return (tasks, running.throttles.cancel(id: id))
        }
        tasks.forEach { $0.cancel() }
        withExtendedLifetime(throttled) {}
    }

    /// Starts `operations`; `ids` are those of the cancellable effects they are nested in, `origin` the innermost.
    /// - Returns: The tasks started, for a concatenation to wait for.
    @discardableResult
    private func start(
        _ operations: [Effect<Action>.Operation],
        ids: Set<AnyHashableSendable>,
        origin: EffectHandle?,
        send: Send<Action>
    ) -> Tasks {
        var started: Tasks = []
        for operation in operations {
            switch operation {
            case .send(let action):
                send.from(origin)(action)
            case .run(let run):
                // A task outside any cancellable effect gets a handle of its own all the same, so that
                // `cancelAll()` (a test skipping in-flight effects) drops what it sends afterwards.
                let handle = origin ?? register(id: nil, parent: nil)
                let send = send.from(handle)
                if let task = spawn(priority: run.priority, ids: ids, for: handle, { await run.perform(with: send) }) {
                    started.append(task)
                }
                if origin == nil { handle.endWork() }
            case .cancellable(let effect, let id, let cancelInFlight):
                if cancelInFlight { cancel(id: id, sparing: origin) }
                let handle = register(id: id, parent: origin)
                started += start(effect.operations, ids: ids.union([id]), origin: handle, send: send)
                handle.endWork()
            case .cancel(let id):
                cancel(id: id)
            case .concatenate(let effects):
                started += concatenate(effects, ids: ids, origin: origin, send: send)
            case .throttle(let effect, let id, let window, let latest):
                started += throttle(effect, id: id, window: window, latest: latest, ids: ids, origin: origin, send: send)
            }
        }
        return started
    }

    /// A handle for a new cancellable effect marked `id` (`nil`: a task outside any), findable until its work is done.
    private func register(id: AnyHashableSendable?, parent: EffectHandle?) -> EffectHandle {
        running.withLock { register(id: id, parent: parent, in: &$0) }
    }

    /// ``register(id:parent:)`` with the lock held.
    private func register(id: AnyHashableSendable?, parent: EffectHandle?, in running: inout Running) -> EffectHandle {
        let handle = EffectHandle(parent: parent) { [weak self] done in
            self?.running.withLock { running in
                running.handles[id]?[ObjectIdentifier(done)] = nil
                if running.handles[id]?.isEmpty == true { running.handles[id] = nil }
            }
        }
        running.handles[id, default: [:]][ObjectIdentifier(handle)] = handle
        return handle
    }

    /// Starts a task running `body` for the effect `effect`, counted as running and cancelled with `ids` until it
    /// returns; starts nothing if that effect is cancelled already.
    private func spawn(
        priority: TaskPriority? = nil,
        ids: Set<AnyHashableSendable>,
        for effect: EffectHandle?,
        _ body: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never>? {
        running.withLock { running in
            // Under the lock where `cancel(id:)` marks the effects it cancels: a cancel that ran before is seen
            // here, and one that runs after finds the task.
            guard effect?.isCancelled != true else { return nil }
            return spawn(in: &running, priority: priority, ids: ids, for: effect, body)
        }
    }

    /// ``spawn(priority:ids:for:_:)`` with the lock held, and without its check.
    private func spawn(
        in running: inout Running,
        priority: TaskPriority? = nil,
        ids: Set<AnyHashableSendable>,
        for effect: EffectHandle? = nil,
        _ body: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        let number = running.nextTask
        running.nextTask += 1
        // The task removes itself when done; it cannot do so before this critical section ends.
        let task = Task(priority: priority) { [weak self] in
            await body()
            self?.finished(number, ids: ids)
        }
        running.tasks[number] = task
        running.taskEffects[number] = effect
        for id in ids { running.ids[id, default: []].insert(number) }
        return task
    }

    private func finished(_ number: UInt64, ids: Set<AnyHashableSendable>) {
        running.withLock { running in
            running.tasks[number] = nil
            running.taskEffects[number] = nil
            for id in ids {
                running.ids[id]?.remove(number)
                if running.ids[id]?.isEmpty == true { running.ids[id] = nil }
            }
        }
    }
}

// MARK: - Concatenation

extension EffectRunner {
    /// Starts `effects` one after another (``Effect/concatenate(_:)-([Effect])``).
    ///
    /// The parts that start no task start here, at once, as they would alone; from the first that does, a task
    /// waits for each part's tasks before it starts the next. That task is marked with `ids`, so cancelling one of
    /// them cancels it; it then cancels the part it waits for (whatever cancelled it) and starts no other.
    private func concatenate(
        _ effects: [Effect<Action>],
        ids: Set<AnyHashableSendable>,
        origin: EffectHandle?,
        send: Send<Action>
    ) -> Tasks {
        // Outside any cancellable effect, a handle of its own (as a task gets), so that `cancelAll()` stops the
        // parts not started yet and drops what the started ones send.
        let ownHandle = origin == nil ? register(id: nil, parent: nil) : nil
        defer { ownHandle?.endWork() }
        let origin = origin ?? ownHandle
        var rest = effects[...]
        while let part = rest.popFirst() {
            let tasks = start(part.operations, ids: ids, origin: origin, send: send)
            guard !tasks.isEmpty, !rest.isEmpty else { continue }
            // Holds a lease on `origin`, so that the parts started later are still cancellable by its id.
            let leased = send.from(origin)
            let waiting = spawn(ids: ids, for: origin) { [weak self, rest] in
                var waitingFor = tasks
                var rest = rest
                while true {
                    await Self.wait(for: waitingFor)
                    guard let self, !Task.isCancelled, leased.origin?.isCancelled != true, let next = rest.popFirst()
                    else { return }
                    waitingFor = self.start(next.operations, ids: ids, origin: leased.origin, send: send)
                }
            }
            return waiting.map { [$0] } ?? []
        }
        return []
    }

    /// Waits until `tasks` have returned; if the waiting task is cancelled, cancels them.
    private static func wait(for tasks: Tasks) async {
        await withTaskCancellationHandler {
            for task in tasks { await task.value }
        } onCancel: {
            // Also runs at once if the waiting task was cancelled before it began to wait: a part started just after
            // the concatenation was cancelled is stopped too.
            for task in tasks { task.cancel() }
        }
    }
}

// MARK: - Throttling

extension EffectRunner {
    /// Runs `effect`, marked `id`, now, later or not at all, as the throttle window of `id` says
    /// (``Effect/throttle(id:for:clock:latest:)``).
    /// - Returns: The effect's tasks if it runs now. A concatenation does not wait for an effect kept for the end of
    ///   the window: it may be replaced or dropped, and the window belongs to the id, not to the concatenation.
    private func throttle(
        _ effect: Effect<Action>,
        id: AnyHashableSendable,
        window: EffectWindow,
        latest: Bool,
        ids: Set<AnyHashableSendable>,
        origin: EffectHandle?,
        send: Send<Action>
    ) -> Tasks {
        // Not `effect.cancellable(id:)`, which would wrap the erased id once more.
        let marked = Effect(operations: [.cancellable(effect, id: id, cancelInFlight: false)])
        let kept = Throttled(effect: effect, ids: ids, send: send.from(origin))
        let (arrival, dropped) = running.withLock { running -> (EffectThrottles<Throttled>.Arrival, Throttled?) in
            let arrival = running.throttles.arrive(kept, id: id, window: window, latest: latest, nestedIn: ids)
            switch arrival {
            case .runNow:
                return (arrival, nil)
            case .kept(let timer, let replaced):
                if let (generation, opened) = timer {
                    // Marked with `id` and the ids the throttle is nested in: cancelling any of them stops the
                    // timer, which ends the window.
                    _ = spawn(in: &running, ids: ids.union([id])) { [weak self] in
                        let ended = (try? await opened.sleepUntilEnd()) != nil && !Task.isCancelled
                        self?.windowEnded(id: id, generation: generation, window: window, ended: ended)
                    }
                }
                return (arrival, replaced)
            case .dropped(let throttled):
                return (arrival, throttled)
            }
        }
        withExtendedLifetime(dropped) {}
        guard case .runNow = arrival else { return [] }
        return start(marked.operations, ids: ids, origin: origin, send: send)
    }

    /// The timer of a throttle window returned: if the clock reached the window's end (`ended`), runs the effect
    /// kept, which opens a new window; if the timer was cancelled, ends the window and drops it.
    private func windowEnded(id: AnyHashableSendable, generation: UInt64, window: EffectWindow, ended: Bool) {
        let (throttled, handle) = running.withLock { running -> (Throttled?, EffectHandle?) in
            guard ended else { return (running.throttles.timerCancelled(id: id, generation: generation), nil) }
            guard let throttled = running.throttles.windowEnded(id: id, generation: generation, window: window)
            else { return (nil, nil) }
            // Marked with `id` in the critical section that takes it: a `cancel(id:)` after this one finds it,
            // and one before it found the window and dropped the effect.
            return (throttled, register(id: id, parent: throttled.send.origin, in: &running))
        }
        guard let throttled, let handle else { return }
        defer { handle.endWork() }
        guard !handle.isCancelled else { return }
        start(throttled.effect.operations, ids: throttled.ids.union([id]), origin: handle, send: throttled.send)
    }
}
