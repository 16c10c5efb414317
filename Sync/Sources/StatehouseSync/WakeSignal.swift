import Synchronization

/// Wakes one waiting loop: raised while nobody waits, it stays raised until the next wait, which then returns at
/// once (raising it twice is raising it once).
final class WakeSignal: Sendable {
    private struct State {
        var raised = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func raise() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.raised = true
                return nil
            }
            state.waiter = nil
            return waiter
        }?.resume()
    }

    /// Returns once raised, after `timeout` (if any), or when the task is cancelled, whichever comes first.
    func wait(upTo timeout: Duration? = nil) async {
        guard let timeout else { return await waitRaised() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.waitRaised() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitRaised() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Cancellation is checked under the lock that the handler takes: either the handler finds the
                // waiter, or the waiter sees the cancellation; it is never stored after the handler ran.
                let now = state.withLock { state in
                    if state.raised || Task.isCancelled {
                        state.raised = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }
    }
}
