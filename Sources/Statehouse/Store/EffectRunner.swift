import Synchronization

/// Runs the effects of a store (or a test store): tasks for `.run`, actions for `.send`, and the bookkeeping of
/// cancellation ids. Knows nothing of reducers; what effects send goes to the ``Send`` each effect is started with.
@usableFromInline
package final class EffectRunner<Action: Sendable>: Sendable {
    private struct Running: Sendable {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var ids: [AnyHashableSendable: Set<UInt64>] = [:]
        /// The cancellable effects with work outstanding, by id.
        var handles: [AnyHashableSendable: [ObjectIdentifier: EffectHandle]] = [:]
        var nextTask: UInt64 = 0
    }

    private let running = Locked(Running())

    @usableFromInline
    package init() {}

    /// Starts `effect`; the actions it sends go to `send`, from any thread.
    @usableFromInline
    package func start(_ effect: Effect<Action>, send: Send<Action>) {
        start(effect.operations, ids: [], origin: nil, send: send)
    }

    /// The number of effects running now.
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
        let (tasks, handles) = running.withLock { running in
            defer { running = Running(nextTask: running.nextTask) }
            return (Array(running.tasks.values), running.handles.values.flatMap(\.values))
        }
        handles.forEach { $0.cancel() }
        tasks.forEach { $0.cancel() }
    }

    /// Starts `operations`; `ids` are those of the cancellable effects they are nested in, `origin` the innermost.
    private func start(
        _ operations: [Effect<Action>.Operation],
        ids: Set<AnyHashableSendable>,
        origin: EffectHandle?,
        send: Send<Action>
    ) {
        for operation in operations {
            switch operation {
            case .send(let action):
                send.from(origin)(action)
            case .run(let work):
                run(work, ids: ids, send: send.from(origin))
            case .cancellable(let effect, let id, let cancelInFlight):
                if cancelInFlight { cancel(id: id) }
                let handle = register(id: id, parent: origin)
                start(effect.operations, ids: ids.union([id]), origin: handle, send: send)
                handle.endWork()
            case .cancel(let id):
                cancel(id: id)
            }
        }
    }

    /// A handle for a new cancellable effect marked `id`, findable by `id` until its work is done.
    private func register(id: AnyHashableSendable, parent: EffectHandle?) -> EffectHandle {
        let handle = EffectHandle(parent: parent) { [weak self] done in
            self?.running.withLock { running in
                running.handles[id]?[ObjectIdentifier(done)] = nil
                if running.handles[id]?.isEmpty == true { running.handles[id] = nil }
            }
        }
        running.withLock { $0.handles[id, default: [:]][ObjectIdentifier(handle)] = handle }
        return handle
    }

    private func run(_ work: @escaping @Sendable (Send<Action>) async -> Void, ids: Set<AnyHashableSendable>, send: Send<Action>) {
        running.withLock { running in
            let number = running.nextTask
            running.nextTask += 1
            // The task removes itself when done; it cannot start before this critical section ends.
            running.tasks[number] = Task { [weak self] in
                await work(send)
                self?.finished(number, ids: ids)
            }
            for id in ids { running.ids[id, default: []].insert(number) }
        }
    }

    private func finished(_ number: UInt64, ids: Set<AnyHashableSendable>) {
        running.withLock { running in
            running.tasks[number] = nil
            for id in ids {
                running.ids[id]?.remove(number)
                if running.ids[id]?.isEmpty == true { running.ids[id] = nil }
            }
        }
    }

    /// Cancels the effects marked `id`: their tasks, and every action they sent that was not applied yet.
    private func cancel(id: AnyHashableSendable) {
        let (tasks, handles) = running.withLock { running in
            (
                (running.ids.removeValue(forKey: id) ?? []).compactMap { running.tasks[$0] },
                running.handles.removeValue(forKey: id).map { Array($0.values) } ?? []
            )
        }
        handles.forEach { $0.cancel() }
        tasks.forEach { $0.cancel() }
    }
}
