import Statehouse

/// The names of a replicated store's action log and of the objects that go with it, checked once (see
/// ``TableNames``).
struct LogNames: Sendable {
    /// The log, one row per action, and the `NOTIFY` channel that announces its appends.
    let log: String
    /// The one-row table holding the last sequence number handed out; its row lock orders the appends.
    let head: String
    /// The snapshots: encoded states, each after a sequence number.
    let snapshots: String
    /// The trigger, and its function, that announce each append.
    let trigger: String

    init(validating name: String) throws(StorageError) {
        log = try TableNames.validated(name, by: "ReplicatedStore", example: "statehouse_actions")
        head = "\(name)_head"
        snapshots = "\(name)_snapshots"
        trigger = "\(name)_notify"
    }
}
