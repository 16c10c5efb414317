import Foundation

/// What a copy of a server's tracker (`--remote`) keeps beside its outbox: the server it copies, its own name, and
/// how far its actions were handed to the outbox.
///
/// The server it names keeps `--remote` from taking a database that is not its copy: a copy's contents are the
/// server's, and any other database would be overwritten with them. The cursor is written once the outbox holds the
/// actions up to it: a command killed before leaves them to the next command, which hands them over again under
/// the same ids (``SyncedTrackerAction`` ids are the copy's name and the action's place in its log), and the server
/// applies each id once.
struct CopyRecord: Codable, Equatable {
    var server: String
    var copy: String
    var cursor: Int64?

    static let fileName = "timetrack-copy.json"

    /// The record in `folder`; `nil` if there is none.
    static func read(in folder: URL) throws -> CopyRecord? {
        let url = folder.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(CopyRecord.self, from: Data(contentsOf: url))
    }

    /// Replaces the record in `folder` whole (a rename), so that a crash leaves the old one or the new one.
    func write(in folder: URL) throws {
        try JSONEncoder().encode(self).write(to: folder.appendingPathComponent(Self.fileName), options: .atomic)
    }
}

/// Why `--remote` refuses the database `--db` names.
struct NotACopy: Error, CustomStringConvertible {
    let description: String
}

/// Another command uses the copy past the lock timeout.
struct CopyInUse: Error, CustomStringConvertible {
    let description: String
}

/// Why a change made in a copy was not queued for the server (and was undone in the copy).
struct ChangeNotQueued: Error, CustomStringConvertible {
    let description: String
}
