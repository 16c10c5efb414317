import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Push across processes for file storages: the windows where a change another process makes could be seen only by
/// the safety net (which `onlyPush` puts out of reach), or where the watcher could lose track. Serialized: each test
/// runs other processes, and one stops the process's watching thread for a moment.
@Suite("Watching files: a storage directory removed, moved, replaced, linked or flooded", .serialized)
struct WatchedDirectoryTests {
    /// The storage directory removed, then made again by another process's save: its changes still arrive, each once.
    @Test func aStorageDirectoryRemovedAndMadeAgainIsStillWatched() async throws {
        let directory = TemporaryDirectory()
        let (count, seen, token) = followed("directory.removed", in: directory)
        #expect(try await fileWorker(directory, "directory.removed", "set", "1"))
        #expect(await eventually { count.value == 1 })
        try FileManager.default.removeItem(at: directory.url)
        // The other process's save makes the directory again.
        #expect(try await fileWorker(directory, "directory.removed", "set", "2"))
        #expect(await eventually { count.value == 2 })
        #expect(try await fileWorker(directory, "directory.removed", "set", "3"))
        #expect(await eventually { seen.elements.last == 3 })
        #expect(seen.elements == [1, 2, 3])
        token.cancel()
    }

    /// The storage directory moved away, then made again: changes where it went are not followed, changes in the
    /// new directory are.
    @Test func aStorageDirectoryMovedAwayAndMadeAgainIsStillWatched() async throws {
        let directory = TemporaryDirectory()
        let moved = TemporaryDirectory()
        let count = StateContainer(0, key: "directory.moved", storage: .file(directory: directory.url), externalChanges: onlyPush)
        #expect(try await fileWorker(directory, "directory.moved", "set", "1"))
        #expect(await eventually { count.value == 1 })
        #expect(rename(directory.url.path, moved.url.path) == 0)
        // What happens where the directory went is no longer this storage's.
        #expect(try await fileWorker(moved, "directory.moved", "set", "99"))
        #expect(try await fileWorker(directory, "directory.moved", "set", "2"))
        #expect(await eventually { count.value == 2 })
    }

    /// The directory and its parents removed, then made again by a save: watched again.
    @Test func aDirectoryWhoseParentIsRemovedTooIsWatchedOnceMadeAgain() async throws {
        let root = TemporaryDirectory()
        let nested = root.url.appendingPathComponent("a/b/state", isDirectory: true)
        let count = StateContainer(0, key: "nested", storage: .file(directory: nested), externalChanges: onlyPush)
        try FileManager.default.removeItem(at: root.url)
        let other = FileStorage(directory: nested)
        try other.save(Data("4".utf8), key: "nested")
        #expect(await eventually { count.value == 4 })
        try other.save(Data("5".utf8), key: "nested")
        #expect(await eventually { count.value == 5 })
    }

    /// A file in the directory's place for a while does not end the watch: once the directory is back, its changes
    /// arrive.
    @Test func aFileInTheDirectorysPlaceForAWhileDoesNotEndTheWatch() async throws {
        let directory = TemporaryDirectory()
        let count = StateContainer(0, key: "file.in.place", storage: .file(directory: directory.url), externalChanges: onlyPush)
        try FileManager.default.removeItem(at: directory.url)
        #expect(FileManager.default.createFile(atPath: directory.url.path, contents: Data("in the way".utf8)))
        #if os(Linux)
        // The follower waits in the parent for a directory to come back, not for the file to go.
        let parent = directory.url.deletingLastPathComponent().path
        #expect(await eventually { KernelWatches.inotifyWatches(on: parent) > 0 })
        #endif
        try FileManager.default.removeItem(at: directory.url)
        #expect(try await fileWorker(directory, "file.in.place", "set", "6"))
        #expect(await eventually { count.value == 6 })
    }

    /// A directory named directly and through a symbolic link: one kernel watch, and changes made through either
    /// name reach both containers.
    @Test func aDirectoryNamedThroughASymbolicLinkSharesTheWatchAndSeesChangesMadeEitherWay() async throws {
        let directory = TemporaryDirectory()
        let links = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: links.url, withIntermediateDirectories: true)
        let link = links.url.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory.url)
        let direct = StateContainer(0, key: "link.a", storage: .file(directory: directory.url), externalChanges: onlyPush)
        let linked = StateContainer(0, key: "link.b", storage: .file(directory: link), externalChanges: onlyPush)
        #if os(Linux)
        #expect(KernelWatches.inotifyWatches(on: directory.url.path) == 1)
        #endif
        #expect(try await runHelper("StatehouseFileWorker", [link.path, "link.a", "set", "1"]))
        #expect(try await fileWorker(directory, "link.b", "set", "2"))
        #expect(await eventually { direct.value == 1 && linked.value == 2 })
    }

    #if os(Linux)
    /// The watching thread stopped (as a debugger would stop it) while far more events come than the kernel queues:
    /// the kernel drops them, among them the one that announced the key's change, and says only that it did. Every
    /// follower still gets its change, and the watch goes on.
    @Test func eventsTheKernelDroppedWhileTheWatcherWasStoppedStillReachEveryFollower() async throws {
        let directory = TemporaryDirectory()
        let elsewhere = TemporaryDirectory()
        let (count, seen, token) = followed("overflow", in: directory)
        let noise = TemporaryDirectory()
        try FileManager.default.createDirectory(at: noise.url, withIntermediateDirectories: true)
        let stopped = Locked(false)
        let resume = DispatchSemaphore(value: 0)
        let stopper = try FileWatcher.shared.watch(directory: noise.url.path, names: ["stop"]) {
            guard !stopped.withLock({ stopped in defer { stopped = true }; return stopped }) else { return }
            resume.wait()
        }
        let other = StateContainer(0, key: "overflow.other", storage: .file(directory: elsewhere.url), externalChanges: onlyPush)
        #expect(FileManager.default.createFile(atPath: noise.url.appendingPathComponent("stop").path, contents: nil))
        #expect(await eventually { stopped.withLock { $0 } })
        let limit = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16_384
        for index in 0...limit {
            let descriptor = open(noise.url.appendingPathComponent("f\(index)").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            #expect(descriptor >= 0)
            close(descriptor)
        }
        #expect(try await fileWorker(directory, "overflow", "set", "9"))
        #expect(try await fileWorker(elsewhere, "overflow.other", "set", "8"))
        resume.signal()
        #expect(await eventually { count.value == 9 && other.value == 8 })
        // And it still watches.
        #expect(try await fileWorker(directory, "overflow", "set", "10"))
        #expect(await eventually { seen.elements.last == 10 })
        #expect(seen.elements == [9, 10])
        stopper.cancel()
        token.cancel()
    }
    #endif

    /// Threads watching and stopping watches of one directory at once leave one working kernel watch, and none once
    /// the last follower goes.
    @Test func watchingAndStoppingOneDirectoryFromManyThreadsLeavesOneWorkingWatch() async throws {
        let directory = TemporaryDirectory()
        do {
            let (count, _, token) = followed("churn", in: directory)
            let storage = FileStorage(directory: directory.url)
            await onNewThreads(8) { thread in
                for round in 0..<100 {
                    let watch = try? storage.watchChanges(of: "churn.\(thread).\(round % 3)") {}
                    if round % 2 == 0 { watch?.cancel() }
                }
            }
            #if os(Linux)
            #expect(KernelWatches.inotifyWatches(on: directory.url.path) == 1)
            #endif
            #expect(try await fileWorker(directory, "churn", "set", "5"))
            #expect(await eventually { count.value == 5 })
            token.cancel()
        }
        #if os(Linux)
        #expect(await eventually { KernelWatches.inotifyWatches(on: directory.url.path) == 0 })
        #endif
    }
}
