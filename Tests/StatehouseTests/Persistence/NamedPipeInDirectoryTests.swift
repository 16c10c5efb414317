import Foundation
import StatehouseTestSupport
import Testing
@testable import Statehouse

/// A named pipe left where a key's file should be (a mistake, a hostile process of the same user): reading it would
/// wait for a writer that never comes.
@Suite("A named pipe in a file storage's directory", .serialized)
struct NamedPipeInDirectoryTests {
    @Test func aFollowingContainerReportsItAndGoesOnWriting() async throws {
        let directory = TemporaryDirectory()
        let storage = FileStorage(directory: directory.url)
        let key = "pipe.followed"
        let container = StateContainer(
            0, key: key, storage: storage, writes: .writeThrough, externalChanges: .poll(every: .milliseconds(5))
        )
        container.modify(1)
        let file = storage.fileURL(for: key)
        // Linked into place, as a save renames its file: the container's next check reads it.
        let pipe = directory.url.appendingPathComponent("pipe")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        let second = directory.url.appendingPathComponent("pipe.second")
        #expect(link(pipe.path, second.path) == 0)
        #expect(rename(second.path, file.path) == 0)
        // Whatever happens, a reader stuck on the pipe is let go (a writer opening it ends the wait): it would keep
        // the whole test process from ending.
        defer {
            let writer = open(pipe.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        #expect(await eventually { container.storageError?.value != nil })
        let error = try #require(container.storageError?.value)
        #expect(error.message.contains("not a regular file"), "\(error)")
        // The writer is not stuck on the pipe: a change is written (over the pipe, which holds no data).
        let flushed = Locked(false)
        Thread.detachNewThread {
            container.modify(2)
            try? container.flush()
            flushed.withLock { $0 = true }
        }
        #expect(await eventually { flushed.withLock { $0 } }, "the container's writer is waiting on the named pipe")
        #expect(try storage.load(key: key) == Data("2".utf8))
    }
}
