import Foundation
import StatehouseTestSupport
import Testing
@testable import Statehouse

/// A safety net longer than any deadline here (`eventually` waits up to a minute): only a notification can pass.
let onlyPush = ExternalChanges.watch(safetyNet: .seconds(3600))

/// A container of `key` in `directory` that follows only by notification, and what its listener saw.
func followed(_ key: String, in directory: TemporaryDirectory) -> (StateContainer<Int>, Recorder<Int>, SubscriptionToken) {
    let container = StateContainer(0, key: key, storage: .file(directory: directory.url), externalChanges: onlyPush)
    let seen = Recorder<Int>()
    return (container, seen, container.observe { seen.append($0) })
}

/// Runs `StatehouseFileWorker`: another process changing `key` in `directory`.
func fileWorker(_ directory: TemporaryDirectory, _ key: String, _ arguments: String...) async throws -> Bool {
    try await runHelper("StatehouseFileWorker", [directory.url.path, key] + arguments)
}

/// Another process changes a file storage while containers and stores here watch it. Serialized: each test runs
/// other processes and counts the kernel's watches.
@Suite("Watching files for changes other processes make", .serialized)
struct FileWatchingTests {
    @Test func aValueAnotherProcessSavesReachesTheListenersWithoutAPoll() async throws {
        let directory = TemporaryDirectory()
        let (count, seen, token) = followed("watch.pushed", in: directory)
        #expect(try await fileWorker(directory, "watch.pushed", "set", "41"))
        #expect(await eventually { count.value == 41 && seen.elements.last == 41 })
        #expect(seen.elements == [41])
        token.cancel()
    }

    @Test func aStoreFollowsAnotherProcessWithoutAPoll() async throws {
        let directory = TemporaryDirectory()
        let store = Store(
            initialState: Counter(), key: "watch.store", storage: .file(directory: directory.url),
            externalChanges: onlyPush, reducer: counterReducer
        )
        let other = FileStorage(directory: directory.url)
        try other.save(try JSONEncoder().encode(Counter(count: 5, name: "outside")), key: "watch.store")
        #expect(await eventually { store.state == Counter(count: 5, name: "outside") })
    }

    @Test func theContainersOwnWritesAreNotTakenForOutsideChanges() async throws {
        let directory = TemporaryDirectory()
        let (count, seen, token) = followed("watch.own", in: directory)
        for value in 1...20 {
            count.modify(value)
            try count.flush()
        }
        // Then a change from outside, which the check after the last own write must see.
        #expect(try await fileWorker(directory, "watch.own", "set", "100"))
        #expect(await eventually { seen.elements.last == 100 })
        #expect(seen.elements == Array(1...20) + [100])
        token.cancel()
    }

    @Test func manyKeysInOneDirectoryShareOneKernelWatchAndOneThread() async throws {
        let directory = TemporaryDirectory()
        let containers = (0..<64).map { index in
            StateContainer(0, key: "watch.many.\(index)", storage: .file(directory: directory.url), externalChanges: onlyPush)
        }
        #if os(Linux)
        #expect(KernelWatches.inotifyWatches(on: directory.url.path) == 1)
        #expect(KernelWatches.threads(named: "StatehouseWatch") == 1)
        #endif
        #expect(try await fileWorker(directory, "watch.many.17", "set", "17"))
        #expect(await eventually { containers[17].value == 17 })
        #expect(containers.enumerated().allSatisfy { index, container in container.value == (index == 17 ? 17 : 0) })
    }

    @Test func theWatchEndsWithTheLastFollower() async throws {
        let directory = TemporaryDirectory()
        do {
            let first = StateContainer(0, key: "watch.end.a", storage: .file(directory: directory.url), externalChanges: onlyPush)
            let second = StateContainer(0, key: "watch.end.b", storage: .file(directory: directory.url), externalChanges: onlyPush)
            #if os(Linux)
            #expect(KernelWatches.inotifyWatches(on: directory.url.path) == 1)
            #endif
            withExtendedLifetime((first, second)) {}
        }
        #if os(Linux)
        #expect(await eventually { KernelWatches.inotifyWatches(on: directory.url.path) == 0 })
        #endif
    }

    @Test func aFileReplacedByRenameIsSeen() async throws {
        let directory = TemporaryDirectory()
        let count = StateContainer(0, key: "watch.renamed", storage: .file(directory: directory.url), externalChanges: onlyPush)
        #expect(try await fileWorker(directory, "watch.renamed", "replace", "5"))
        #expect(await eventually { count.value == 5 })
        #expect(try await fileWorker(directory, "watch.renamed", "replace", "6"))
        #expect(await eventually { count.value == 6 })
    }

    @Test func aFileDeletedAndMadeAgainIsSeen() async throws {
        let directory = TemporaryDirectory()
        let count = StateContainer(0, key: "watch.recreated", storage: .file(directory: directory.url), externalChanges: onlyPush)
        #expect(try await fileWorker(directory, "watch.recreated", "set", "1"))
        #expect(await eventually { count.value == 1 })
        #expect(try await fileWorker(directory, "watch.recreated", "remove"))
        #expect(try await fileWorker(directory, "watch.recreated", "set", "2"))
        #expect(await eventually { count.value == 2 })
    }

    @Test func theWatchSurvivesAThousandRapidSavesAndDeliversTheLast() async throws {
        let directory = TemporaryDirectory()
        let (count, seen, token) = followed("watch.burst", in: directory)
        #expect(try await fileWorker(directory, "watch.burst", "count", "1000"))
        #expect(await eventually { seen.elements.last == 1_000 })
        // Some of the thousand are skipped (a check reads the latest), none comes out of order.
        #expect(zip(seen.elements, seen.elements.dropFirst()).allSatisfy { $0 < $1 })
        #expect(seen.elements.last == 1_000)
        // And it still watches.
        #expect(try await fileWorker(directory, "watch.burst", "set", "7"))
        #expect(await eventually { count.value == 7 })
        token.cancel()
    }

    #if os(Linux)
    @Test func aUserDefaultsSuiteChangedByAnotherProcessReachesTheListeners() async throws {
        let directory = TemporaryDirectory()  // removes the suite's file too
        let suite = "statehouse.tests.\(directory.url.lastPathComponent)"
        let count = StateContainer(0, key: "watch.defaults", storage: .userDefaults(suiteName: suite), externalChanges: onlyPush)
        #expect(try await runHelper("StatehouseFileWorker", ["defaults:\(suite)", "watch.defaults", "set", "12"]))
        #expect(await eventually { count.value == 12 })
        #expect(try await runHelper("StatehouseFileWorker", ["defaults:\(suite)", "watch.defaults", "set", "13"]))
        #expect(await eventually { count.value == 13 })
    }
    #endif

    @Test func whereWatchingFailsTheContainerPollsAndSaysWhy() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        // A storage directory that cannot be made: a file is in the way.
        let blocker = directory.url.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        let seen = Recorder<StatehouseDiagnostic>()
        let count = StatehouseDiagnostics.$handler.withValue({ seen.append($0) }) {
            StateContainer(0, key: "watch.failing", storage: .file(directory: blocker.appendingPathComponent("state")))
        }
        let diagnostic = try #require(seen.elements.first)
        #expect(seen.count == 1)
        #expect(diagnostic.kind == .watchingUnavailable)
        #expect(diagnostic.key == "watch.failing")
        #expect(diagnostic.message.contains("cannot be watched, so they are looked for every 0.25 seconds instead"))
        withExtendedLifetime(count) {}
    }
}
