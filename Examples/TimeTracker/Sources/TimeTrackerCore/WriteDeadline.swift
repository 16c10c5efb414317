import Foundation
import GRDB
import Synchronization

/// How long a write may wait for another program to release the database, counted from when it was asked for.
///
/// SQLite calls the busy handler on the thread of the statement that found the database locked; GRDB's writes run
/// one at a time, so the deadline of the write in progress is the one that applies. A request that waited in line
/// behind other writes has spent part of its time already: each write gets what is left of its own, not a fresh
/// timeout, so eight requests waiting on a stuck database all get their answer after about the same time instead of
/// one after the other. Readers (which WAL lets run beside a writer) wait at most `timeout` on their own.
final class WriteDeadline: Sendable {
    let timeout: Duration
    private let current = Mutex<ContinuousClock.Instant?>(nil)

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Runs `body`, a write's work on the writer connection, with `deadline` as the limit of its waits.
    func applying<Result>(_ deadline: ContinuousClock.Instant, _ body: () throws -> Result) rethrows -> Result {
        current.withLock { $0 = deadline }
        defer { current.withLock { $0 = nil } }
        return try body()
    }

    /// SQLite's busy handler: sleep a little and try again, until the deadline.
    var busyMode: Database.BusyMode {
        let pause = Duration.milliseconds(5)
        let readerTries = Int(timeout / pause)
        return .callback { [self] tries in
            if let deadline = current.withLock({ $0 }) {
                guard ContinuousClock.now < deadline else { return false }
            } else if tries >= readerTries {
                return false
            }
            usleep(UInt32(pause / .microseconds(1)))
            return true
        }
    }
}
