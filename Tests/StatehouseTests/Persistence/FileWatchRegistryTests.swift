import Testing
@testable import Statehouse

/// The file watcher's bookkeeping, with no kernel, thread or lock.
@Suite("File watch registry")
struct FileWatchRegistryTests {
    typealias Registry = FileWatchRegistry<String>

    @Test func theFirstSubscriberOfADirectoryStartsItsWatchAndTheLastStopsIt() {
        var registry = Registry()
        let first = registry.add("dir", names: ["a.state"]) {}
        let second = registry.add("dir", names: ["b.state"]) {}
        #expect(first.isNewDirectory && !second.isNewDirectory)
        #expect(registry.names(in: "dir") == ["a.state", "b.state"])
        let removedFirst = registry.remove(first.id)
        #expect(removedFirst?.directory == "dir" && removedFirst?.wasLast == false)
        #expect(registry.names(in: "dir") == ["b.state"])
        let removedSecond = registry.remove(second.id)
        #expect(removedSecond?.directory == "dir" && removedSecond?.wasLast == true)
        let removedAgain = registry.remove(second.id)
        #expect(removedAgain == nil)  // already gone
        let again = registry.add("dir", names: []) {}
        #expect(again.isNewDirectory)
    }

    @Test func onlyTheSubscribersOfAChangedNameAreTold() {
        var registry = Registry()
        let a = registry.add("dir", names: ["a.state"]) {}
        let b = registry.add("dir", names: ["b.state", "b-wal"]) {}
        let elsewhere = registry.add("other", names: ["a.state"]) {}
        #expect(Set(registry.callbacks(in: "dir", named: ["a.state"]).keys) == [a.id])
        #expect(Set(registry.callbacks(in: "dir", named: ["b-wal", ".tmp"]).keys) == [b.id])
        #expect(registry.callbacks(in: "dir", named: [".a.state.1234.tmp"]).isEmpty)
        // Lost events: everyone in the directory, nobody elsewhere.
        #expect(Set(registry.callbacks(in: "dir", named: nil).keys) == [a.id, b.id])
        #expect(Set(registry.callbacks(in: "other", named: nil).keys) == [elsewhere.id])
    }

    @Test func aDirectoryThatWentAwayTellsItsSubscribersOnceAndIsForgotten() {
        var registry = Registry()
        let a = registry.add("dir", names: ["a.state"]) {}
        let told = registry.removeDirectory("dir")
        #expect(Set(told.keys) == [a.id])
        #expect(registry.callbacks(in: "dir", named: nil).isEmpty)
        let removed = registry.remove(a.id)
        #expect(removed == nil)
        let again = registry.add("dir", names: ["a.state"]) {}
        #expect(again.isNewDirectory)
    }
}
