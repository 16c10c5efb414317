import Dispatch
import Foundation
import Synchronization
import StatehouseTesting
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Holds a token; says when its `deinit` starts (its token is let go right after).
private final class TokenHolder: Sendable {
    let token: SubscriptionToken
    let onDeinit: (@Sendable () -> Void)?

    init(_ token: SubscriptionToken, onDeinit: (@Sendable () -> Void)? = nil) {
        self.token = token
        self.onDeinit = onDeinit
    }

    deinit { onDeinit?() }
}

/// A screen's state that keeps the subscription of the screen: only `n` is stored.
private struct ScreenState: Codable, Sendable {
    var n: Int
    var holder: TokenHolder?

    init(n: Int, holder: TokenHolder? = nil) {
        self.n = n
        self.holder = holder
    }

    private enum CodingKeys: String, CodingKey { case n }

    init(from decoder: any Decoder) throws {
        n = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .n)
        holder = nil
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(n, forKey: .n)
    }
}

/// The child process of the two exit tests below. A persisted container; a queued token `T` (registered first) whose
/// call for 5 waits until its holder goes, then changes the container; a synchronous listener that blocks another
/// thread's delivery of 6, so that later rounds queue up. The value (7, holding the only reference to `T`) is then
/// replaced by 8 before its round is delivered (the round is superseded, so no queued block of `T` holds it): by
/// `modify` or by `update`. `T`'s cancellation waits for its call in progress; that call changes the container.
/// Exits with a failure if the change of 8 never returns.
private func queuedTokenReleasedByAChange(update: Bool) {
    let container = StateContainer(
        ScreenState(n: 0), key: "replacedValue.machine", storage: MemoryStorage(),
        writes: .coalesced(window: .seconds(600)), externalChanges: .ignore
    )
    let weakContainer = SharedWeak(container)
    let queue = DispatchQueue(label: "replacedValue.machine.queue")
    let callStarted = DispatchSemaphore(value: 0)
    let holderGone = DispatchSemaphore(value: 0)
    let blockerEntered = DispatchSemaphore(value: 0)
    let blockerRelease = DispatchSemaphore(value: 0)
    var token: SubscriptionToken? = container.observe(on: .queue(queue)) { screen in
        guard screen.n == 5 else { return }
        callStarted.signal()
        _ = holderGone.wait(timeout: .now() + .seconds(30))
        weakContainer.object?.modify(ScreenState(n: 9))
    }
    let blocker = container.observe { screen in
        guard screen.n == 6 else { return }
        blockerEntered.signal()
        _ = blockerRelease.wait(timeout: .now() + .seconds(60))
    }
    container.modify(ScreenState(n: 5))
    guard callStarted.wait(timeout: .now() + .seconds(30)) == .success else { fatalError("T's call never started") }
    let delivering = onAThreadOfItsOwn { container.modify(ScreenState(n: 6)) }
    guard blockerEntered.wait(timeout: .now() + .seconds(30)) == .success else { fatalError("no blocked delivery") }
    container.modify(ScreenState(n: 7, holder: TokenHolder(token.take()!) { holderGone.signal() }))
    let changed = onAThreadOfItsOwn {
        if update {
            container.update { $0 = ScreenState(n: 8) }
        } else {
            container.modify(ScreenState(n: 8))
        }
    }
    let outcome = changed.wait(timeout: .now() + .seconds(20))
    blockerRelease.signal()
    if outcome == .timedOut {
        fatalError("deadlock: the change of 8 never returned (update: \(update))")
    }
    _ = delivering.wait(timeout: .now() + .seconds(30))
    blocker.cancel()
}

/// A value replaced by `modify`, `modify(_:if:)`, a transactional `update` or a value another process stored is let
/// go outside every lock, before the change is delivered: a token the old value held is cancelled first, and hears
/// nothing of the value that replaced it; a call that token's cancellation waits for may change the container.
@Suite("A replaced value is let go before the change is delivered", .serialized)
struct ReplacedValueReleaseTests {
    /// `takeStoredValue` (a value another process stored): the replaced value must be let go before the change is
    /// delivered, as for `modify`, so that a token it held hears nothing of the value that replaced it.
    @Test func aValueTakenFromStorageLetsTheReplacedValueGoBeforeTheChangeIsDelivered() {
        let container = StateContainer(ScreenState(n: 0), key: uniqueKey("replacedValue.take"))
        let heard = Recorder<Int>()
        container.modify(ScreenState(n: 1, holder: TokenHolder(container.observe { heard.append($0.n) })))
        container.takeStoredValue(ScreenState(n: 2), ifUnchangedSince: container.changeCount) {}
        #expect(heard.elements == [1], "the token held by the replaced value heard the value that replaced it")
        #expect(container.value.n == 2)
    }

    /// The same through the real path: a persisted container polling a transactional memory storage that "another
    /// process" writes to.
    @Test func aValueAnotherProcessStoredLetsTheReplacedValueGoBeforeTheChangeIsDelivered() async throws {
        let storage = InMemoryStorage().withoutNotifications
        let key = uniqueKey("replacedValue.outside")
        let container = StateContainer(
            ScreenState(n: 0), key: key, storage: storage, writes: .writeThrough,
            externalChanges: .poll(every: .milliseconds(5))
        )
        let heard = Recorder<Int>()
        container.modify(ScreenState(n: 1, holder: TokenHolder(container.observe { heard.append($0.n) })))
        try container.flush()
        let arrived = DispatchSemaphore(value: 0)
        // Registered after the held token: it comes later in the round, so when it hears 2 the held one was asked.
        let watcher = container.observe { if $0.n == 2 { arrived.signal() } }
        try storage.save(JSONEncoder().encode(ScreenState(n: 2)), key: key)
        #expect(await waitOffThePool(for: arrived), "the outside value never arrived")
        #expect(heard.elements == [1], "the token held by the replaced value heard the value that replaced it")
        watcher.cancel()
    }

    /// `modify` lets it go before the delivery.
    @Test func modifyLetsTheReplacedValueGoBeforeTheChangeIsDelivered() {
        let container = StateContainer(ScreenState(n: 0), key: uniqueKey("replacedValue.modify"))
        let heard = Recorder<Int>()
        container.modify(ScreenState(n: 1, holder: TokenHolder(container.observe { heard.append($0.n) })))
        container.modify(ScreenState(n: 2))
        #expect(heard.elements == [1])
    }

    /// The conditional `modify(_:if:)` (the storage-error container's) too.
    @Test func conditionalModifyLetsTheReplacedValueGoOutsideTheLockBeforeTheDelivery() {
        let container = StateContainer(ScreenState(n: 0), key: uniqueKey("replacedValue.modify.if"))
        let heard = Recorder<Int>()
        container.modify(ScreenState(n: 1, holder: TokenHolder(container.observe { heard.append($0.n) })))
        container.modify(ScreenState(n: 2)) { $0.n == 1 }
        #expect(heard.elements == [1])
        container.modify(ScreenState(n: 3)) { $0.n == 1 }
        #expect(container.value.n == 2)
    }

    /// Persisted containers: the storage's state (`PersistenceMachine.latest`) holds the value too; whoever lets
    /// the last reference go must do it outside every lock, before the delivery.
    @Test(arguments: ["memory", "file", "userDefaults", "transactionalMemory"])
    func persistedModifyLetsTheReplacedValueGoBeforeTheDelivery(storageKind: String) throws {
        let directory = TemporaryDirectory()
        let key = uniqueKey("replacedValue.persisted.\(storageKind)")
        let heard = Recorder<Int>()
        func run(_ storage: some StateStorage) throws {
            let container = StateContainer(
                ScreenState(n: 0), key: key, storage: storage, writes: .coalesced(window: .seconds(60)),
                externalChanges: .ignore
            )
            container.modify(ScreenState(n: 1, holder: TokenHolder(container.observe { heard.append($0.n) })))
            try container.flush()
            container.modify(ScreenState(n: 2))
            container.modify(ScreenState(n: 3, holder: TokenHolder(container.observe { heard.append(100 + $0.n) })))
            container.modify(ScreenState(n: 4))
            try container.flush()
        }
        switch storageKind {
        case "memory": try run(MemoryStorage())
        case "file": try run(FileStorage(directory: directory.url))
        case "userDefaults":
            try run(UserDefaultsStorage(suiteName: "statehouse.tests.\(directory.url.lastPathComponent)"))
        default: try run(InMemoryStorage().withoutNotifications)
        }
        #expect(heard.elements == [1, 103])
    }

    /// A transactional `update` (the memory storage runs `transact` under its lock), with and without a local
    /// change pending (the attempt then starts from the value in memory, which holds the token).
    @Test(arguments: [false, true])
    func transactionalUpdateLetsTheReplacedValueGoBeforeTheDelivery(pending: Bool) throws {
        let storage = InMemoryStorage().withoutNotifications
        let container = StateContainer(
            ScreenState(n: 0), key: uniqueKey("replacedValue.transaction"), storage: storage,
            writes: .coalesced(window: .seconds(600)), externalChanges: .ignore
        )
        #expect(container.persistence?.updatesInTransactions == true)
        let heard = Recorder<Int>()
        container.modify(ScreenState(n: 1, holder: TokenHolder(container.observe { heard.append($0.n) })))
        if !pending { try container.flush() }
        let result = container.update { screen in
            screen = ScreenState(n: screen.n + 1)
            return screen.n
        }
        #expect(result == 2)
        #expect(heard.elements == [1], "the token held by the replaced value heard the value that replaced it")
        #expect(container.value.n == 2)
    }

    /// A queued token, held only by the value: its cancellation waits for its call in progress, which changes the
    /// container. `modify` lets the value go outside every lock, so that call can end.
    @Test func persistedModifyReleasingAQueuedTokenWhoseRunningCallChangesTheContainer() async {
        await #expect(processExitsWith: .success) {
            queuedTokenReleasedByAChange(update: false)
        }
    }

    /// The same change made by a plain (non-transactional) `update` on a persisted container: the body lets go of
    /// the container's copy, and the persistence's `latest` snapshot has the last reference. It must not be let go
    /// inside `PersistenceMachine`'s lock (`persistence.changed`): the queued token's cancellation waits for its
    /// call, which waits for that lock.
    @Test func persistedUpdateReleasingAQueuedTokenWhoseRunningCallChangesTheContainer() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            queuedTokenReleasedByAChange(update: true)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!message.contains("deadlock"), "\(message.suffix(300))")
    }

    /// A value that holds the last reference to a token of its own container, replaced by `modify`: the replaced
    /// value is destroyed outside the container's lock, since the token's cancellation takes that lock.
    @Test func replacingAValueThatHoldsTheLastTokenOfItsContainer() {
        struct Screen: Sendable {
            var token: SubscriptionToken?
        }
        let container = StateContainer(Screen(), key: "replacedValue.nested.value.\(UUID().uuidString)")
        let heard = Recorder<Int>()
        container.modify(Screen(token: container.observe { _ in heard.append(1) }))
        container.modify(Screen())
        container.modify(Screen())
        #expect(heard.elements == [1], "the token went with the replaced value, and was cancelled")
    }
}
