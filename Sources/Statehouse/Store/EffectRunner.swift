import Synchronization

/// Runs the effects of a store (or a test store): tasks for `.run`, actions for `.send`, and the bookkeeping of
/// cancellation ids. Knows nothing of reducers; what effects send goes to the ``Send`` each effect is started with.
@usableFromInline
package final class EffectRunner<Action: Sendable>: Sendable {
    private struct Running: Sendable {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var ids: [AnyHashableSendable: Set<UInt64>] = [:]
        var nextTask: UInt64 = 0
    }

    private let running = Locked(Running())

    @usableFromInline
    package init() {}

    /// Starts `effect`; the actions it sends go to `send`, from any thread.
    @usableFromInline
    package func start(_ effect: Effect<Action>, send: Send<Action>) {
        start(effect.operations, ids: [], send: send)
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
        let tasks = running.withLock { running in
            defer { running = Running(nextTask: running.nextTask) }
            return Array(running.tasks.values)
        }
        tasks.forEach { $0.cancel() }
    }

    private func start(_ operations: [Effect<Action>.Operation], ids: Set<AnyHashableSendable>, send: Send<Action>) {
        for operation in operations {
            switch operation {
            case .send(let action):
                send(action)
            case .run(let work):
                run(work, ids: ids, send: send)
            case .cancellable(let effect, let id, let cancelInFlight):
                if cancelInFlight { cancel(id: id) }
                start(effect.operations, ids: ids.union([id]), send: send)
            case .cancel(let id):
                cancel(id: id)
            }
        }
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

    private func cancel(id: AnyHashableSendable) {
        let tasks = running.withLock { running in
            (running.ids.removeValue(forKey: id) ?? []).compactMap { running.tasks[$0] }
        }
        tasks.forEach { $0.cancel() }
    }
}
