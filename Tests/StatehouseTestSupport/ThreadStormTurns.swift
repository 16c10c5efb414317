import Statehouse

/// Runs `body` while no other test's thread storm runs: storms (many threads hammering locks) take turns across the
/// whole test process. Nested calls from inside a turn run at once.
///
/// Why: under ThreadSanitizer the Swift runtime never marks a generic type's metadata cache as initialized, so every
/// lookup of it (each `StateContainer<Int>.update`, each `AsyncStream.next`) takes that cache's lock, a
/// priority-inheriting futex that hands itself to one waiter at a time. Five storms side by side (40 threads on two
/// cores) queued the cooperative pool's two threads behind those locks for 30–100 s: every test waiting with a
/// deadline beside them failed (stacks sampled with gdb showed the pool's threads queued there). One storm at a time
/// leaves the pool a share of the cores; the storms still meet every test that does not storm.
public func duringThreadStorm<T>(_ body: () async throws -> T) async rethrows -> T {
    if ThreadStormTurn.isHeld { return try await body() }
    await ThreadStormTurn.shared.take()
    defer { ThreadStormTurn.shared.give() }
    return try await ThreadStormTurn.$isHeld.withValue(true) { try await body() }
}

/// One turn at a time, handed to waiters in the order they came; waiting holds no thread.
///
/// On `Locked` rather than `Mutex`: ThreadSanitizer cannot see `Mutex` on Linux and reports its accesses as races.
private final class ThreadStormTurn: Sendable {
    static let shared = ThreadStormTurn()
    @TaskLocal static var isHeld = false

    private struct State {
        var isTaken = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Locked(State())

    func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isMine = state.withLock { state in
                if state.isTaken {
                    state.waiters.append(continuation)
                    return false
                }
                state.isTaken = true
                return true
            }
            if isMine { continuation.resume() }
        }
    }

    func give() {
        let next = state.withLock { state in
            if state.waiters.isEmpty {
                state.isTaken = false
                return nil
            }
            return state.waiters.removeFirst()
        } as CheckedContinuation<Void, Never>?
        next?.resume()
    }
}
