import Foundation
import StatehouseSync
import TimeTrackerCore

/// What a command that follows a server (`--remote`) says of its changes once they are sent, or not.
struct SyncReport {
    let server: URL
    let status: SyncStatus
    /// The actions that still wait in the copy's outbox.
    let pending: Int
    /// The outbox's number of the command's first action: a refusal of an earlier one does not fail the command.
    let ownFrom: Int64

    /// The status in one line, as `timetrack sync` prints it.
    var line: String {
        let address = server.absoluteString
        switch status {
        case .synced:
            return "In step with \(address)."
        case .pending:
            return "\(Self.actions(pending)) still \(pending == 1 ? "waits" : "wait") for \(address) to take \(pending == 1 ? "it" : "them")."
        case .offline where pending == 0:
            return "\(address) cannot be reached; nothing waits here to be sent."
        case .offline:
            return "Queued: \(address) cannot be reached; \(Self.actions(pending)) \(pending == 1 ? "waits" : "wait") here (`timetrack sync` sends \(pending == 1 ? "it" : "them"))."
        case .refused(let refusals):
            return refusals.map { "The server refused \($0.action): \($0.reason) It is undone here." }.joined(separator: "\n")
        case .failed(let error):
            return "Not sent to \(address): \(error) \(Self.actions(pending)) \(pending == 1 ? "waits" : "wait") here."
        }
    }

    /// Whether the server took every change.
    var isInStep: Bool {
        status == .synced
    }

    /// Tells a command's user what they must know: nothing when the server took everything; a note when changes
    /// wait (they are kept, and the command succeeded) or the server refused an earlier command's change; an error
    /// when it refused this command's, or refuses to sync.
    func tell() throws {
        switch status {
        case .synced:
            return
        case .pending, .offline:
            StandardOutput.warn(line.prefix(1).lowercased() + line.dropFirst())
        case .refused(let refusals) where refusals.allSatisfy({ $0.seq < ownFrom }):
            StandardOutput.warn("an earlier change was refused. " + line)
        case .refused, .failed:
            throw NotInStep(report: self)
        }
    }

    private static func actions(_ count: Int) -> String {
        count == 1 ? "1 change" : "\(count) changes"
    }

    struct NotInStep: Error, CustomStringConvertible {
        let report: SyncReport
        var description: String { report.line }
    }
}
