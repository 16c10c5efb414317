import Foundation
import GRDB

/// Checks a `--db` path before and after SQLite opens it, so that every problem comes out as what is wrong and what to
/// do, with the path: SQLite and Foundation would say `NSCocoaErrorDomain Code=512 "(null)"` for a directory that
/// cannot be made, mention GRDB's issue 102 for a read-only file, and quietly add timetrack's tables to any SQLite
/// database they are given.
enum DatabaseLocation {
    /// SQLite's `application_id` of a timetrack database ("time" in ASCII): what tells it from another
    /// application's database (see https://www.sqlite.org/fileformat.html#application_id).
    static let applicationID: Int32 = 0x7469_6D65

    /// The identifier of timetrack's first migration, in GRDB's record of them.
    static let firstMigration = "projects and activities"

    /// The tables timetrack makes, and GRDB's record of its migrations.
    private static let ownTables: Set<String> = [
        "project", "activity", "deletedProject", "deletedActivity", "undoStep", "actionLog", "syncReceipt",
        "grdb_migrations",
    ]

    /// Before opening: the path names a file timetrack can create, or a regular file it can read and write.
    static func checkBeforeOpening(_ path: String) throws(TrackerError) {
        guard !path.isEmpty else {
            throw .unusableDatabase(path: path, problem: "the path is empty", fix: "Give --db the path of a file.")
        }
        guard !path.hasSuffix("/"), ![".", ".."].contains((path as NSString).lastPathComponent) else {
            throw .unusableDatabase(
                path: path, problem: "it ends in /, . or .., which name a directory", fix: "Give --db the path of a file."
            )
        }
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue else {
                throw .unusableDatabase(path: path, problem: "it is a directory", fix: "Give --db the path of a file in it.")
            }
            // Of what a symbolic link points to, as SQLite opens it.
            let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            let type = (try? manager.attributesOfItem(atPath: target))?[.type] as? FileAttributeType
            guard type == .typeRegular else {
                throw .unusableDatabase(
                    path: path, problem: "it is not a regular file (a device, a pipe or a socket)",
                    fix: "Give --db the path of a file."
                )
            }
            guard manager.isReadableFile(atPath: path), manager.isWritableFile(atPath: path) else {
                throw .unusableDatabase(
                    path: path, problem: "timetrack may not read and write it",
                    fix: "Give yourself permission (chmod u+rw \(path)), or choose another --db path."
                )
            }
        }
        let directory = (path as NSString).deletingLastPathComponent
        guard !directory.isEmpty else { return }
        if let failure = makeDirectory(directory) {
            throw .unusableDatabase(
                path: path, problem: "its directory cannot be created (\(String(cString: strerror(failure))))",
                fix: "Create \(directory) yourself, or choose another --db path."
            )
        }
        // SQLite writes its journal (-wal, -shm) beside the database.
        guard manager.isWritableFile(atPath: directory) else {
            throw .unusableDatabase(
                path: path, problem: "timetrack may not write in its directory, where SQLite keeps its journal",
                fix: "Give yourself permission (chmod u+w \(directory)), or choose another --db path."
            )
        }
    }

    /// Before opening, for an existing database: it is timetrack's, or new, or a timetrack database made before
    /// application ids were set. Read with a read-only connection of its own, so that a database of another
    /// application is left exactly as it was (opening it for timetrack would switch it to WAL). It waits for locks
    /// as the tracker's readers do: another tracker's last connection locks the whole file while it closes.
    static func checkOwner(_ path: String, busyMode: Database.BusyMode) throws(TrackerError) {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > 0 else { return }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = busyMode
        let (id, version, tables, migrated): (Int32, Int32, Set<String>, Bool)
        do {
            (id, version, tables, migrated) = try DatabaseQueue(path: path, configuration: configuration).read { db in
                let id = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                let version = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                let tables = Set(try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT GLOB 'sqlite_*'"
                ))
                var migrated = false
                if tables.contains("grdb_migrations") {
                    migrated = try Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = ?)",
                        arguments: [firstMigration]
                    ) ?? false
                }
                return (id, version, tables, migrated)
            }
        } catch {
            throw openingFailure(error, path: path)
        }
        if id == applicationID { return }
        guard id == 0 else {
            throw .unusableDatabase(
                path: path, problem: "it is the database of another application (its application_id is \(id))",
                fix: "timetrack leaves it alone; choose another --db path."
            )
        }
        let foreign = tables.subtracting(ownTables)
        guard foreign.isEmpty else {
            throw .unusableDatabase(
                path: path,
                problem: "it is the database of another application (it has tables timetrack did not make: "
                    + foreign.sorted().joined(separator: ", ") + ")",
                fix: "timetrack leaves it alone; choose another --db path."
            )
        }
        // No application id: a timetrack database from before ids (its migrations say so), or an empty one. Tables
        // without timetrack's migrations, or a schema version, are another application's, even with familiar names.
        guard tables.isEmpty ? version == 0 : migrated else {
            throw .unusableDatabase(
                path: path, problem: "it is the database of another application (timetrack did not make its schema)",
                fix: "timetrack leaves it alone; choose another --db path."
            )
        }
    }

    /// After opening: marks the database as timetrack's (new, or made before application ids were set).
    static func claim(_ db: Database) throws {
        try db.execute(sql: "PRAGMA application_id = \(applicationID)")
    }

    /// A failure to open, as words a person can act on.
    static func openingFailure(_ error: any Error, path: String) -> TrackerError {
        if let error = error as? TrackerError { return error }
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_NOTADB:
                return .unusableDatabase(
                    path: path, problem: "it is not an SQLite database",
                    fix: "timetrack will not overwrite it; choose another --db path."
                )
            case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM:
                return .unusableDatabase(
                    path: path, problem: "SQLite cannot open it for writing (\(SQLiteBackend.reason(error)))",
                    fix: "Check that the file and its directory are writable and not on a read-only disk, or choose another --db path."
                )
            default:
                break
            }
        }
        return .database("could not open \(path): \(SQLiteBackend.reason(error))")
    }

    /// Makes `directory` and what is missing above it, owner-only (Foundation's errors here carry no reason on
    /// Linux); returns the `errno` of a failure.
    private static func makeDirectory(_ directory: String) -> Int32? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            return isDirectory.boolValue ? nil : ENOTDIR
        }
        let parent = (directory as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != directory, let failure = makeDirectory(parent) { return failure }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else { return errno }
        return nil
    }
}
