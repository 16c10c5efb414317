import Statehouse
import Synchronization

/// Publishes a sync status to the container its listeners and sequence follow, one thread at a time, the latest each
/// time: a thread that finds another publishing leaves it the news, and that one publishes again, so that no older
/// status is published after a newer one. Publishing happens outside any lock: the status's listeners are the app's,
/// and may call back into the store, which publishes again (and then leaves the news to the publisher it is called
/// from).
final class StatusPublishing: Sendable {
    private struct Turn {
        var isTaken = false
        var changedMeanwhile = false
    }

    private let turn = Mutex(Turn())
    private let container: StateContainer<SyncStatus>

    init(to container: StateContainer<SyncStatus>) {
        self.container = container
    }

    /// Publishes what `latest` says the status is now, unless another thread publishes at the moment (which then
    /// asks `latest` again).
    func publish(_ latest: () -> SyncStatus) {
        let mine = turn.withLock { turn in
            guard !turn.isTaken else {
                turn.changedMeanwhile = true
                return false
            }
            turn.isTaken = true
            return true
        }
        guard mine else { return }
        repeat {
            let status = latest()
            if container.value != status { container.modify(status) }
        } while turn.withLock { turn in
            defer { turn.changedMeanwhile = false }
            if !turn.changedMeanwhile { turn.isTaken = false }
            return turn.changedMeanwhile
        }
    }
}
