import Synchronization

/// Keeps one refresh trying when the snapshot after a change cannot be read, however many changes are announced
/// meanwhile: a database that stays unreadable while others keep writing to it gets one retry loop, not one more for
/// every announced change.
///
/// Each read covers every change announced before it began; a change announced during a read (whose own read then
/// failed) makes the loop read once more.
final class RefreshRetry: Sendable {
    private struct State {
        var running = false
        var needsRead = false
    }

    private let state = Mutex(State())

    /// A refresh's snapshot could not be read. Returns whether the caller is to keep trying (`false`: a loop is
    /// trying already, and will read again).
    func snapshotFailed() -> Bool {
        state.withLock { state in
            state.needsRead = true
            guard !state.running else { return false }
            state.running = true
            return true
        }
    }

    /// The trying loop begins a read.
    func readBegins() {
        state.withLock { $0.needsRead = false }
    }

    /// The trying loop's read ended. Returns whether it is to read again (it failed, or a change was announced and
    /// not read meanwhile); `false` ends the loop.
    func readEnded(succeeded: Bool) -> Bool {
        state.withLock { state in
            if !succeeded { state.needsRead = true }
            if !state.needsRead { state.running = false }
            return state.running
        }
    }

    /// The trying loop stops (the tracker closed).
    func stopped() {
        state.withLock { $0.running = false }
    }
}
