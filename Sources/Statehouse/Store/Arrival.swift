/// How a caller from outside a store's work waits for work it submits to the busy store.
@usableFromInline
enum Arrival: Sendable {
    /// Until the work, and what it queues, is done: `dispatch`, time travel, replay.
    case waiting
    /// Not, unless the store has a backlog: a subscription's registration, whose token the caller gets at once.
    case unlessBacklogged
    /// Not at all: an effect's action (an effect never waits for the store, which may be cancelling it), a change
    /// read from the storage, a test's marker.
    case detached
    /// Until the work is done, suspending its task instead of blocking its thread: `send`.
    case suspending

    @usableFromInline
    func waiting<Work>(for store: any TurnTaking) -> Inbox<Work>.Waiting {
        switch self {
        case .waiting: .blocking(store)
        case .unlessBacklogged: .blockingWhenBacklogged(store)
        case .detached: .never
        case .suspending: .suspending
        }
    }
}
