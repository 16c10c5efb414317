// Attacks session 18's later commits, by a fresh-context reviewer:
// - 1ee83ea: the container's remover lets go of the removed entry itself, after `link.locked` returns;
// - 33672a3: `observe` takes its listener `consuming` and moves it into the table (`ListenerHandOff`);
// - 3e30fe6 + 612887b: a replaced value is let go outside the container's lock, before the change is delivered
//   (`modify`, `modify(_:if:)`, a transactional `update`, `takeStoredValue`);
// - 183951a: a combined token is cancelled once every part is.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Holds a token; says when its `deinit` starts (its token is let go right after).
private final class LateTokenHolder: Sendable {
    let token: SubscriptionToken
    let onDeinit: (@Sendable () -> Void)?

    init(_ token: SubscriptionToken, onDeinit: (@Sendable () -> Void)? = nil) {
        self.token = token
        self.onDeinit = onDeinit
    }

    deinit { onDeinit?() }
}

/// A screen's state that keeps the subscription of the screen: only `n` is stored.
private struct LateScreen: Codable, Sendable {
    var n: Int
    var holder: LateTokenHolder?

    init(n: Int, holder: LateTokenHolder? = nil) {
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

private final class LateCaptured: Sendable {}


private func lateKey(_ name: String) -> String {
    "attack18b.\(name).\(UUID().uuidString)"
}

@Suite(.serialized) struct AttackSession18LateReviewTests {
    // MARK: 3e30fe6 + 612887b: the replaced value

    /// `takeStoredValue` (a value another process stored): the replaced value must be let go before the change is
    /// delivered, as for `modify`, so that a token it held hears nothing of the value that replaced it.
    @Test func aValueTakenFromStorageLetsTheReplacedValueGoBeforeTheChangeIsDelivered() {
        let container = StateContainer(LateScreen(n: 0), key: lateKey("take"))
        let heard = Recorder<Int>()
        container.modify(LateScreen(n: 1, holder: LateTokenHolder(container.observe { heard.append($0.n) })))
        container.takeStoredValue(LateScreen(n: 2), ifUnchangedSince: container.changeCount) {}
        #expect(heard.elements == [1], "the token held by the replaced value heard the value that replaced it")
        #expect(container.value.n == 2)
    }

    /// The same through the real path: a persisted container polling an `AttackMemoryStorage` that "another
    /// process" writes to.
    @Test func aValueAnotherProcessStoredLetsTheReplacedValueGoBeforeTheChangeIsDelivered() async throws {
        let storage = AttackMemoryStorage()
        let key = lateKey("outside")
        let container = StateContainer(
            LateScreen(n: 0), key: key, storage: storage, writes: .writeThrough,
            externalChanges: .poll(every: .milliseconds(5))
        )
        let heard = Recorder<Int>()
        container.modify(LateScreen(n: 1, holder: LateTokenHolder(container.observe { heard.append($0.n) })))
        try container.flush()
        let arrived = DispatchSemaphore(value: 0)
        // Registered after the held token: it comes later in the round, so when it hears 2 the held one was asked.
        let watcher = container.observe { if $0.n == 2 { arrived.signal() } }
        try storage.save(JSONEncoder().encode(LateScreen(n: 2)), key: key)
        #expect(await attackWait(for: arrived), "the outside value never arrived")
        #expect(heard.elements == [1], "the token held by the replaced value heard the value that replaced it")
        watcher.cancel()
    }

    /// Control: `modify` does let it go before the delivery.
    @Test func modifyLetsTheReplacedValueGoBeforeTheChangeIsDelivered() {
        let container = StateContainer(LateScreen(n: 0), key: lateKey("modify"))
        let heard = Recorder<Int>()
        container.modify(LateScreen(n: 1, holder: LateTokenHolder(container.observe { heard.append($0.n) })))
        container.modify(LateScreen(n: 2))
        #expect(heard.elements == [1])
    }

    /// The storage-error container's conditional `modify`.
    @Test func conditionalModifyLetsTheReplacedValueGoOutsideTheLockBeforeTheDelivery() {
        let container = StateContainer(LateScreen(n: 0), key: lateKey("modify.if"))
        let heard = Recorder<Int>()
        container.modify(LateScreen(n: 1, holder: LateTokenHolder(container.observe { heard.append($0.n) })))
        container.modify(LateScreen(n: 2)) { $0.n == 1 }
        #expect(heard.elements == [1])
        container.modify(LateScreen(n: 3)) { $0.n == 1 }
        #expect(container.value.n == 2)
    }

    /// Persisted containers: the storage's state (`PersistenceMachine.latest`) holds the value too; whoever lets
    /// the last reference go must do it outside every lock, before the delivery.
    @Test(arguments: ["memory", "file", "userDefaults", "attackMemory"])
    func persistedModifyLetsTheReplacedValueGoBeforeTheDelivery(storageKind: String) throws {
        let directory = TemporaryDirectory()
        let key = lateKey("persisted.\(storageKind)")
        let heard = Recorder<Int>()
        func run(_ storage: some StateStorage) throws {
            let container = StateContainer(
                LateScreen(n: 0), key: key, storage: storage, writes: .coalesced(window: .seconds(60)),
                externalChanges: .ignore
            )
            container.modify(LateScreen(n: 1, holder: LateTokenHolder(container.observe { heard.append($0.n) })))
            try container.flush()
            container.modify(LateScreen(n: 2))
            container.modify(LateScreen(n: 3, holder: LateTokenHolder(container.observe { heard.append(100 + $0.n) })))
            container.modify(LateScreen(n: 4))
            try container.flush()
        }
        switch storageKind {
        case "memory": try run(MemoryStorage())
        case "file": try run(FileStorage(directory: directory.url))
        case "userDefaults":
            try run(UserDefaultsStorage(suiteName: "statehouse.tests.\(directory.url.lastPathComponent)"))
        default: try run(AttackMemoryStorage())
        }
        #expect(heard.elements == [1, 103])
    }

    /// A transactional `update` (AttackMemoryStorage runs `transact` under its lock), with and without a local
    /// change pending (the attempt then starts from the value in memory, which holds the token).
    @Test(arguments: [false, true])
    func transactionalUpdateLetsTheReplacedValueGoBeforeTheDelivery(pending: Bool) throws {
        let storage = AttackMemoryStorage()
        let container = StateContainer(
            LateScreen(n: 0), key: lateKey("transaction"), storage: storage,
            writes: .coalesced(window: .seconds(600)), externalChanges: .ignore
        )
        #expect(container.persistence?.updatesInTransactions == true)
        let heard = Recorder<Int>()
        container.modify(LateScreen(n: 1, holder: LateTokenHolder(container.observe { heard.append($0.n) })))
        if !pending { try container.flush() }
        let result = container.update { screen in
            screen = LateScreen(n: screen.n + 1)
            return screen.n
        }
        #expect(result == 2)
        #expect(heard.elements == [1], "the token held by the replaced value heard the value that replaced it")
        #expect(container.value.n == 2)
    }

    /// A queued token, held only by the value: its cancellation waits for its call in progress, which changes the
    /// container. `modify` lets the value go outside every lock, so that call can end (control for the next test).
    @Test func persistedModifyReleasingAQueuedTokenWhoseRunningCallChangesTheContainer() async {
        await #expect(processExitsWith: .success) {
            lateQueuedTokenReleasedByAChange(update: false)
        }
    }

    /// The same change made by a plain (non-transactional) `update` on a persisted container: the body lets go of
    /// the container's copy, the persistence's `latest` snapshot has the last reference, and it is let go inside
    /// `PersistenceMachine`'s lock (`persistence.changed`). The queued token's cancellation waits for its call, which
    /// waits for that lock: a deadlock, where the same body on a container without storage stops with the misuse
    /// message.
    @Test func persistedUpdateReleasingAQueuedTokenWhoseRunningCallChangesTheContainer() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            lateQueuedTokenReleasedByAChange(update: true)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!message.contains("deadlock"), "\(message.suffix(300))")
    }

    // MARK: 1ee83ea: the remover lets go of the entry itself

    @Test func cancelLetsGoOfTheListenerBeforeItReturns() {
        let container = StateContainer(0, key: lateKey("remover.cancel"))
        let (token, weakCaptured): (SubscriptionToken, AttackWeak<LateCaptured>) = {
            let captured = LateCaptured()
            return (container.observe { _ in withExtendedLifetime(captured) {} }, AttackWeak(captured))
        }()
        container.modify(1)
        #expect(weakCaptured.object != nil)
        token.cancel()
        #expect(weakCaptured.object == nil, "the removed entry was not let go")
    }

    @Test func releasingATokenLetsGoOfItsListener() {
        let container = StateContainer(0, key: lateKey("remover.deinit"))
        let captured = LateCaptured()
        let weakCaptured = AttackWeak(captured)
        var token: SubscriptionToken? = container.observe { [captured] _ in withExtendedLifetime(captured) {} }
        _ = consume captured
        #expect(weakCaptured.object != nil)
        withExtendedLifetime(token) {}
        token = nil
        #expect(weakCaptured.object == nil)
    }

    /// A listener owns the next token, whose listener owns the next: cancelling the first ends all three.
    @Test func cancellingTheFirstOfAChainOfListenersEachOwningTheNext() {
        let container = StateContainer(0, key: lateKey("remover.chain"))
        let heard = Recorder<String>()
        let first: SubscriptionToken = {
            let third = container.observe { heard.append("c\($0)") }
            let second = container.observe { [third] value in
                heard.append("b\(value)")
                withExtendedLifetime(third) {}
            }
            return container.observe { [second] value in
                heard.append("a\(value)")
                withExtendedLifetime(second) {}
            }
        }()
        container.modify(1)
        first.cancel()
        container.modify(2)
        #expect(heard.elements.sorted() == ["a1", "b1", "c1"])
    }

    /// A listener lets go of another token of the container (its only reference), whose listener owns a third.
    @Test func aTokenReleasedInsideAListenerWhoseListenerOwnsAnotherToken() {
        let container = StateContainer(0, key: lateKey("remover.inside"))
        let heard = Recorder<String>()
        let slot = AttackSlot<SubscriptionToken>()
        slot.set({
            let inner = container.observe { heard.append("c\($0)") }
            return container.observe { [inner] value in
                heard.append("b\(value)")
                withExtendedLifetime(inner) {}
            }
        }())
        let releaser = container.observe { value in
            heard.append("a\(value)")
            if value == 1 { slot.letGo() }
        }
        container.modify(1)
        container.modify(2)
        #expect(heard.elements == ["c1", "b1", "a1", "a2"])
        releaser.cancel()
    }

    /// A listener lets go of its own token, and its closure owns another token of the same container.
    @Test func aTokenReleasedInsideItsOwnListenerThatOwnsAnotherToken() {
        let container = StateContainer(0, key: lateKey("remover.self"))
        let heard = Recorder<String>()
        let slot = AttackSlot<SubscriptionToken>()
        let inner = container.observe { heard.append("inner\($0)") }
        slot.set(container.observe { [inner] value in
            heard.append("outer\(value)")
            withExtendedLifetime(inner) {}
            if value == 1 { slot.letGo() }
        })
        _ = consume inner
        container.modify(1)
        container.modify(2)
        #expect(heard.elements == ["inner1", "outer1"])
    }

    /// The listener holds the last reference to its container: cancelling lets the container end inside `cancel()`.
    @Test func cancellingAListenerThatHoldsTheLastReferenceToItsContainer() {
        let (token, weakContainer): (SubscriptionToken, AttackWeak<StateContainer<Int>>) = {
            let container = StateContainer(0, key: lateKey("remover.container"))
            return (container.observe { [container] _ in _ = container.key }, AttackWeak(container))
        }()
        #expect(weakContainer.object != nil)
        token.cancel()
        #expect(weakContainer.object == nil)
        #expect(token.isCancelled)
    }

    /// A token let go on another thread while its entry is still ahead in a round held by the first listener.
    @Test func aTokenReleasedOnAnotherThreadWhileARoundHoldsItsEntry() async {
        let container = StateContainer(0, key: lateKey("remover.round"))
        let (blocker, entered, release) = attackListenerHeldAtOne(container)
        let heard = Recorder<Int>()
        let slot = AttackSlot<SubscriptionToken>()
        slot.set({
            let inner = container.observe { heard.append(100 + $0) }
            return container.observe { [inner] value in heard.append(value); withExtendedLifetime(inner) {} }
        }())
        let changed = onAThreadOfItsOwn { container.modify(1) }
        #expect(await attackWait(for: entered))
        slot.letGo()
        release.signal()
        #expect(await attackWait(for: changed))
        container.modify(2)
        // The inner token lives while the round holds the outer listener's closure: it may hear 1, never 2; the
        // outer one was let go before its call, and hears nothing.
        #expect(heard.elements.allSatisfy { $0 == 101 }, "heard: \(heard.elements)")
        blocker.cancel()
    }

    // MARK: 33672a3: observe takes its listener consuming

    /// Source compatibility: one stored closure passed to several `observe` calls (each copies it).
    @Test func oneStoredClosurePassedToSeveralObserveCalls() async {
        let container = StateContainer(0, key: lateKey("consuming.shared"))
        let heard = Recorder<Int>()
        let listener: @Sendable (Int) -> Void = { heard.append($0) }
        let first = container.observe(listener)
        let second = container.observe(initial: true, listener)
        let queued = DispatchQueue(label: "attack18b.queued")
        let third = container.observe(on: .queue(queued), listener)
        container.modify(1)
        queued.sync {}
        #expect(heard.elements == [0, 1, 1, 1])
        first.cancel()
        second.cancel()
        container.modify(2)
        queued.sync {}
        #expect(heard.elements == [0, 1, 1, 1, 2])
        third.cancel()
        container.modify(3)
        #expect(heard.elements == [0, 1, 1, 1, 2])
        // The closure is still the caller's.
        listener(7)
        #expect(heard.elements.last == 7)
    }

    /// A closure stored in a property, and one forwarded through a generic function's parameter.
    @Test func storedAndForwardedClosures() {
        final class Screen: Sendable {
            let render: @Sendable (Int) -> Void
            init(_ render: @escaping @Sendable (Int) -> Void) { self.render = render }
        }
        func subscribe<Value: Sendable>(
            _ container: StateContainer<Value>, _ listener: @escaping @Sendable (Value) -> Void
        ) -> [SubscriptionToken] {
            [container.observe(listener), container.observe(initial: true, listener)]
        }
        let container = StateContainer(0, key: lateKey("consuming.forwarded"))
        let heard = Recorder<Int>()
        let screen = Screen { heard.append($0) }
        let tokens = subscribe(container, screen.render) + [container.observe(screen.render)]
        container.modify(1)
        #expect(heard.elements == [0, 1, 1, 1])
        for token in tokens { token.cancel() }
        container.modify(2)
        #expect(heard.elements == [0, 1, 1, 1])
        screen.render(5)
        #expect(heard.elements.last == 5)
    }

    /// The listener's captures live exactly while the subscription does, whatever the path (no copy leaked, none
    /// released twice): synchronous, `initial`, queued, and one closure registered twice.
    @Test(arguments: ["sync", "initial", "queued", "queuedInitial", "twice"])
    func theListenersCapturesLiveAsLongAsTheSubscription(path: String) {
        let container = StateContainer(0, key: lateKey("consuming.captures.\(path)"))
        let queue = DispatchQueue(label: "attack18b.captures")
        let calls = AttackCounter()
        let (tokens, weakCaptured): ([SubscriptionToken], AttackWeak<LateCaptured>) = {
            let captured = LateCaptured()
            let listener: @Sendable (Int) -> Void = { _ in withExtendedLifetime(captured) {}; calls.increment() }
            let tokens: [SubscriptionToken]
            switch path {
            case "sync": tokens = [container.observe(listener)]
            case "initial": tokens = [container.observe(initial: true, listener)]
            case "queued": tokens = [container.observe(on: .queue(queue), listener)]
            case "queuedInitial": tokens = [container.observe(initial: true, on: .queue(queue), listener)]
            default: tokens = [container.observe(listener), container.observe(initial: true, listener)]
            }
            return (tokens, AttackWeak(captured))
        }()
        for value in 1...3 { container.modify(value) }
        queue.sync {}
        #expect(weakCaptured.object != nil)
        let expected = switch path {
        case "sync", "queued": 3
        case "initial", "queuedInitial": 4
        default: 7
        }
        #expect(calls.value == expected, "every change once, the initial value once")
        tokens.first?.cancel()
        if tokens.count > 1 {
            #expect(weakCaptured.object != nil, "the other registration still holds the closure")
        }
        for token in tokens { token.cancel() }
        queue.sync {}
        #expect(weakCaptured.object == nil)
    }

    /// `initial: true` while another thread is delivering: the initial call comes once, after that round, and the
    /// changes after it once each.
    @Test func initialWhileAnotherThreadDelivers() async {
        let container = StateContainer(0, key: lateKey("consuming.initial.busy"))
        let (blocker, entered, release) = attackListenerHeldAtOne(container)
        let changed = onAThreadOfItsOwn { container.modify(1) }
        #expect(await attackWait(for: entered))
        let heard = Recorder<Int>()
        let token = container.observe(initial: true) { heard.append($0) }
        #expect(heard.elements.isEmpty, "the initial value came while another thread delivered")
        release.signal()
        #expect(await attackWait(for: changed))
        container.modify(2)
        #expect(heard.elements == [1, 2])
        token.cancel()
        blocker.cancel()
    }

    /// A listener that captures its own token (through a slot) cancels it in its first call, with `initial`.
    @Test(arguments: [false, true])
    func aListenerCancellingItsOwnTokenInItsFirstCall(initial: Bool) {
        let container = StateContainer(0, key: lateKey("consuming.self"))
        let heard = Recorder<Int>()
        let own = Locked<SubscriptionToken?>(nil)
        let cancelNow = AttackFlag()
        let token = container.observe(initial: initial) { value in
            heard.append(value)
            if let token = own.withLock({ $0 }) { token.cancel() } else { cancelNow.set() }
        }
        own.withLock { $0 = token }
        if cancelNow.isSet { token.cancel() }
        container.modify(1)
        container.modify(2)
        #expect(heard.elements == (initial ? [0] : [1]))
        own.withLock { $0 = nil }
    }

    /// A listener given to `observe(initial: true)` that owns another token of the container, cancelled from the
    /// initial call.
    @Test func anInitialCallThatLetsGoOfAnotherTokenItOwns() {
        let container = StateContainer(0, key: lateKey("consuming.initial.other"))
        let heard = Recorder<String>()
        let slot = AttackSlot<SubscriptionToken>()
        slot.set(container.observe { heard.append("other\($0)") })
        let token = container.observe(initial: true) { value in
            heard.append("mine\(value)")
            slot.letGo()
        }
        container.modify(1)
        #expect(heard.elements == ["mine0", "mine1"])
        token.cancel()
    }

    // MARK: 183951a: combined tokens

    @Test func aCombinationIsCancelledOnceItsContainerEnds() {
        var container: StateContainer<Int>? = StateContainer(0, key: lateKey("combined.end"))
        let combined = SubscriptionToken.combining([
            container!.observe { _ in },
            container!.observe(on: .queue(DispatchQueue(label: "attack18b.combined"))) { _ in },
        ])
        #expect(!combined.isCancelled)
        container = nil
        #expect(combined.isCancelled)
        combined.cancel()
        #expect(combined.isCancelled)
    }

    @Test func aCombinationOverTwoContainersIsLiveWhileOneLives() {
        var first: StateContainer<Int>? = StateContainer(0, key: lateKey("combined.first"))
        let second = StateContainer(0, key: lateKey("combined.second"))
        let heard = Recorder<Int>()
        let combined = SubscriptionToken.combining([first!.observe { _ in }, second.observe { heard.append($0) }])
        first = nil
        #expect(!combined.isCancelled)
        second.modify(1)
        combined.cancel()
        #expect(combined.isCancelled)
        second.modify(2)
        #expect(heard.elements == [1])
    }

    /// A combination of nothing was never cancelled, and nothing can cancel it: it reports cancelled at once.
    @Test func anEmptyCombinationIsNotCancelledBeforeCancel() {
        let combined = SubscriptionToken.combining([])
        #expect(!combined.isCancelled, "a combination of nothing says it was cancelled before anyone cancelled it")
        combined.cancel()
        #expect(combined.isCancelled)
    }
}

/// The child process of the two exit tests above. A persisted container; a queued token `T` (registered first) whose
/// call for 5 waits until its holder goes, then changes the container; a synchronous listener that blocks another
/// thread's delivery of 6, so that later rounds queue up. The value (7, holding the only reference to `T`) is then
/// replaced by 8 before its round is delivered (the round is superseded, so no queued block of `T` holds it): by
/// `modify` or by `update`. `T`'s cancellation waits for its call in progress; that call changes the container.
/// Exits with a failure if the change of 8 never returns.
private func lateQueuedTokenReleasedByAChange(update: Bool) {
    let container = StateContainer(
        LateScreen(n: 0), key: "attack18b.machine", storage: MemoryStorage(),
        writes: .coalesced(window: .seconds(600)), externalChanges: .ignore
    )
    let weakContainer = AttackWeak(container)
    let queue = DispatchQueue(label: "attack18b.machine.queue")
    let callStarted = DispatchSemaphore(value: 0)
    let holderGone = DispatchSemaphore(value: 0)
    let blockerEntered = DispatchSemaphore(value: 0)
    let blockerRelease = DispatchSemaphore(value: 0)
    var token: SubscriptionToken? = container.observe(on: .queue(queue)) { screen in
        guard screen.n == 5 else { return }
        callStarted.signal()
        _ = holderGone.wait(timeout: .now() + .seconds(30))
        weakContainer.object?.modify(LateScreen(n: 9))
    }
    let blocker = container.observe { screen in
        guard screen.n == 6 else { return }
        blockerEntered.signal()
        _ = blockerRelease.wait(timeout: .now() + .seconds(60))
    }
    container.modify(LateScreen(n: 5))
    guard callStarted.wait(timeout: .now() + .seconds(30)) == .success else { fatalError("T's call never started") }
    let delivering = onAThreadOfItsOwn { container.modify(LateScreen(n: 6)) }
    guard blockerEntered.wait(timeout: .now() + .seconds(30)) == .success else { fatalError("no blocked delivery") }
    container.modify(LateScreen(n: 7, holder: LateTokenHolder(token.take()!) { holderGone.signal() }))
    let changed = onAThreadOfItsOwn {
        if update {
            container.update { $0 = LateScreen(n: 8) }
        } else {
            container.modify(LateScreen(n: 8))
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
