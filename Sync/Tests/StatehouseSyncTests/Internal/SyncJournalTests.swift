import Statehouse
@testable import StatehouseSync
import StatehouseSyncWire
import SyncFixtures
import Testing

/// The journal's rules without threads or network: the app sees the server's state with its pending actions
/// applied again, and an action leaves the outbox only once the server's state holds it or the server refused it.
@Suite struct SyncJournalTests {
    private let reduce = SyncJournal<Tracker, TrackerAction>.reducer({ state, action in
        trackerReducer(&state, action)
        return .none
    }, outboxLimit: 100)

    private func journal(_ steps: [SyncStep<Tracker, TrackerAction>]) -> SyncJournal<Tracker, TrackerAction> {
        var journal = SyncJournal<Tracker, TrackerAction>(client: "me", initialState: Tracker())
        for step in steps { _ = reduce(&journal, step) }
        return journal
    }

    @Test func aLocalActionAppliesAtOnceAndIsQueuedWithTheNextNumber() {
        let journal = journal([.local(.count(1)), .local(.add("a"))])
        #expect(journal.local == Tracker(entries: ["a"], total: 1))
        #expect(journal.confirmed == Tracker())
        #expect(journal.pending.map(\.seq) == [1, 2] && journal.nextSeq == 3)
    }

    @Test func anotherClientsChangeIsRebasedUnderThePendingActions() {
        let other = StoreChange(cursor: 1, state: Tracker(entries: ["theirs"]))
        let journal = journal([.local(.add("mine")), .change(other)])
        #expect(journal.local.entries == ["theirs", "mine"])
        #expect(journal.pending.count == 1)
    }

    @Test func ownActionsLeaveTheOutboxWhenTheServersStateHoldsThemNotWhenThePushIsAnswered() {
        var steps: [SyncStep<Tracker, TrackerAction>] = [.local(.count(1)), .local(.count(2))]
        steps.append(.pushed(PushAnswer(handledThrough: 2, refused: [], cursor: 2)))
        #expect(journal(steps).pending.count == 2)
        steps.append(.change(StoreChange(cursor: 1, state: Tracker(total: 1), handledThrough: 1)))
        let partly = journal(steps)
        #expect(partly.pending.map(\.seq) == [2] && partly.local.total == 3)
        steps.append(.change(StoreChange(cursor: 2, state: Tracker(total: 3), handledThrough: 2)))
        let done = journal(steps)
        #expect(done.pending.isEmpty && done.local.total == 3 && done.cursor == 2)
    }

    @Test func aRefusedActionLeavesTheOutboxAndTheState() {
        let journal = journal([
            .local(.add("a")), .local(.forbidden), .local(.add("b")),
            .pushed(PushAnswer(handledThrough: 3, refused: [Refusal(seq: 1, reason: "no")], cursor: 1)),
        ])
        #expect(journal.pending.map(\.seq) == [2, 3])
        #expect(journal.local.entries == ["b"])
    }

    /// Events from an older connection, or a pull overtaken by the feed, never take the state back.
    @Test func anOlderChangeOrSnapshotIsIgnored() {
        let newer = StoreChange(cursor: 5, state: Tracker(total: 5))
        let older = StoreChange(cursor: 4, state: Tracker(total: 4))
        let pulled = StoreSnapshot(cursor: 3, state: Tracker(total: 3), handledThrough: 0)
        #expect(journal([.change(newer), .change(older), .snapshot(pulled)]).local.total == 5)
    }

    /// A feed registered before a push sends a snapshot older than the state a pull brought after it; taken, it
    /// would drop the app's own action, which the pull had confirmed, until the next change.
    @Test func aFeedsFirstSnapshotOlderThanAPullKeepsTheAction() {
        let journal = journal([
            .local(.add("mine")),
            .pushed(PushAnswer(handledThrough: 1, refused: [], cursor: 1)),
            .snapshot(StoreSnapshot(cursor: 1, state: Tracker(entries: ["mine"]), handledThrough: 1)),
            .snapshot(StoreSnapshot(cursor: 0, state: Tracker(), handledThrough: 0)),
        ])
        #expect(journal.local.entries == ["mine"] && journal.cursor == 1)
    }

    /// The feed is faster than the push's answer: the actions it shows handled wait for that answer, which alone
    /// says whether one was refused, and are pushed again if it never comes.
    @Test func actionsSeenBeforeTheirAnswerArePushedAgainUntilAnAnswerCoversThem() {
        var steps: [SyncStep<Tracker, TrackerAction>] = [.local(.add("kept")), .local(.forbidden), .local(.count(1))]
        steps.append(.change(StoreChange(cursor: 1, state: Tracker(entries: ["kept"]), handledThrough: 2)))
        let seen = journal(steps)
        #expect(seen.pending.map(\.seq) == [3] && seen.unanswered.map(\.seq) == [1, 2])
        #expect(seen.unpushed(upTo: 100).map(\.seq) == [1, 2, 3])
        steps.append(.pushed(PushAnswer(handledThrough: 3, refused: [Refusal(seq: 2, reason: "no")], cursor: 2)))
        let answered = journal(steps)
        #expect(answered.unanswered.isEmpty && answered.answeredThrough == 3)
        #expect(answered.unpushed(upTo: 100).isEmpty && answered.pending.map(\.seq) == [3])
    }

    /// Answered first, then seen: nothing is pushed again.
    @Test func actionsAnsweredBeforeTheyAreSeenAreNotPushedAgain() {
        let journal = journal([
            .local(.add("a")), .local(.add("b")),
            .pushed(PushAnswer(handledThrough: 2, refused: [], cursor: 2)),
            .change(StoreChange(cursor: 2, state: Tracker(entries: ["a", "b"]), handledThrough: 2)),
        ])
        #expect(journal.unanswered.isEmpty && journal.pending.isEmpty && journal.unpushed(upTo: 100).isEmpty)
    }
}
