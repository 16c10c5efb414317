import Foundation

/// One key of a ``RemoteStorage``'s cache: the server's value as last heard, and the local write not yet on the
/// server, if any. Kept on disk, so that an app starts offline where it stopped and pushes what it had not.
struct RemoteEntry: Codable, Equatable, Sendable {
    /// A local write the server does not hold yet.
    struct PendingWrite: Codable, Equatable, Sendable {
        /// `nil`: a removal.
        var value: Data?
        /// The server's version and value the write was made on: a push replaces that version only.
        var base: Int64?
        var baseValue: Data?
        /// Rises with each local write: tells the write a push carried from one made meanwhile.
        var number: UInt64
    }

    /// The server's value as last heard (`nil`: nothing stored), and its version (`nil`: never heard).
    var server: Data?
    var version: Int64?
    var pending: PendingWrite?

    /// What the app sees: its own write until the server holds it, else the server's value.
    var visible: Data? {
        pending.map(\.value) ?? server
    }

    /// A local write, on top of the one still pending if any (whose base stays: the server has seen neither).
    mutating func record(_ value: Data?) {
        if var pending {
            pending.value = value
            pending.number += 1
            self.pending = pending
        } else {
            pending = PendingWrite(value: value, base: version, baseValue: server, number: 0)
        }
    }

    /// The server's value at `version`, from its feed or a read; an older one than already heard is ignored.
    mutating func heard(_ value: Data?, version: Int64) {
        guard self.version.map({ version > $0 }) ?? true else { return }
        server = value
        self.version = version
    }

    /// The server stored `value` as `version`: the push of the pending write numbered `number`, or (`nil`) an
    /// update's transaction. A local write made meanwhile stays pending, now on top of what the server stored.
    mutating func stored(_ value: Data?, version: Int64, pushing number: UInt64?) {
        heard(value, version: version)
        guard var pending else { return }
        if let number, pending.number == number {
            self.pending = nil
        } else {
            pending.base = version
            pending.baseValue = value
            self.pending = pending
        }
    }

    /// The pending write met the server's newer `value`: what `policy` makes of the three goes on top of it. A
    /// server that holds the write's very bytes already took it (a push whose answer was lost): nothing to settle.
    mutating func resolve(against value: Data?, version: Int64, with policy: ConflictPolicy) {
        heard(value, version: version)
        guard var pending else { return }
        guard pending.value != server else {
            self.pending = nil
            return
        }
        switch policy.resolve(pending.baseValue, pending.value, server) {
        case .takeRemote:
            self.pending = nil
        case .push(let resolved):
            pending.value = resolved
            pending.base = self.version
            pending.baseValue = server
            pending.number += 1
            self.pending = pending
        }
    }
}
