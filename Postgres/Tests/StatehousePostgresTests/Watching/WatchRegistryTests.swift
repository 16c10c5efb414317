@testable import StatehousePostgres
import StatehouseTestSupport
import Testing

/// The listener's decisions with no connection, task or lock: who is called for which version.
struct WatchRegistryTests {
    /// A registry with one watcher of `key`, and what that watcher received.
    private func registry(watching key: String) -> (WatchRegistry, Recorder<Void>, UInt64) {
        var registry = WatchRegistry()
        let calls = Recorder<Void>()
        let (id, firstCall) = registry.add({ calls.append(()) }, of: key, isListening: false)
        #expect(firstCall == nil)
        return (registry, calls, id)
    }

    private func call(_ callbacks: [WatchRegistry.Callback]) -> Int {
        callbacks.forEach { $0() }
        return callbacks.count
    }

    @Test func theFirstCatchUpCallsEvenWithNoRow() {
        var (registry, calls, _) = registry(watching: "a")
        #expect(call(registry.caughtUp([:], for: ["a"])) == 1)
        #expect(call(registry.caughtUp([:], for: ["a"])) == 0)
        #expect(calls.count == 1)
    }

    @Test func aVersionReportedTwiceCallsOnce() {
        var (registry, _, _) = registry(watching: "a")
        _ = registry.caughtUp(["a": 5], for: ["a"])
        #expect(call(registry.notified(.version(6), of: "a")) == 1)
        // The catch-up after a reconnection read the same change: no second call.
        #expect(call(registry.caughtUp(["a": 6], for: ["a"])) == 0)
        // An older version (a catch-up read before a notification that arrived first) is not news either.
        #expect(call(registry.caughtUp(["a": 5], for: ["a"])) == 0)
        #expect(call(registry.caughtUp(["a": 7], for: ["a"])) == 1)
    }

    @Test func aDeletedRowCallsOnceAndANewRowAfterItCallsAgain() {
        var (registry, _, _) = registry(watching: "a")
        _ = registry.caughtUp(["a": 5], for: ["a"])
        #expect(call(registry.notified(.deleted, of: "a")) == 1)
        #expect(call(registry.caughtUp([:], for: ["a"])) == 0)
        #expect(call(registry.notified(.version(9), of: "a")) == 1)
    }

    @Test func otherKeysAndRemovedWatchersAreNotCalled() {
        var (registry, _, id) = registry(watching: "a")
        #expect(call(registry.notified(.version(1), of: "b")) == 0)
        registry.remove(id, of: "a")
        #expect(registry.isEmpty)
        #expect(call(registry.notified(.version(2), of: "a")) == 0)
    }

    @Test func aWatcherAddedWhileListeningIsCalledAtOnceAndOnlyForNewsAfterwards() {
        var (registry, first, _) = registry(watching: "a")
        _ = registry.caughtUp(["a": 5], for: ["a"])
        let second = Recorder<Void>()
        let (_, firstCall) = registry.add({ second.append(()) }, of: "a", isListening: true)
        firstCall?()
        #expect(second.count == 1)
        #expect(call(registry.caughtUp(["a": 5], for: ["a"])) == 0)
        #expect(call(registry.notified(.version(6), of: "a")) == 2)
        #expect(first.count == 1)
    }

    /// The key's other watcher already heard of version 6, announced before the new watcher was added; the new one,
    /// added while the listener reconnected, must still get its first call at the catch-up, where 6 is no news.
    @Test func aWatcherAddedWhileReconnectingIsCalledAtTheCatchUpEvenIfTheVersionIsKnown() {
        var (registry, first, _) = registry(watching: "a")
        _ = registry.caughtUp(["a": 5], for: ["a"])
        #expect(call(registry.notified(.version(6), of: "a")) == 1)
        let late = Recorder<Void>()
        _ = registry.add({ late.append(()) }, of: "a", isListening: false)
        #expect(call(registry.caughtUp(["a": 6], for: ["a"])) == 1)
        #expect(late.count == 1)
        #expect(first.count == 1)
        #expect(call(registry.caughtUp(["a": 6], for: ["a"])) == 0)
    }
}
