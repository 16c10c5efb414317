import Foundation
import GRDB

/// Opens SQLite databases that several processes share, the way Statehouse's own storage does.
public enum SharedDatabase {
    /// Opens (or creates) the database at `path` as a GRDB `DatabasePool`.
    ///
    /// - A missing database is created readable by its owner only (SQLite would use the process's default
    ///   permissions), in a directory created owner-only if needed; SQLite gives its `-wal` and `-shm` files the same
    ///   permissions.
    /// - The pool uses WAL mode, so readers never wait for the writer.
    /// - A connection that finds the database locked by another process waits up to 10 seconds (GRDB's default is
    ///   to fail at once), unless `configuration` sets its own `busyMode`.
    public static func openPool(at path: String, configuration: Configuration = Configuration()) throws -> DatabasePool {
        try createOwnerOnlyFile(at: path)
        var configuration = configuration
        if case .immediateError = configuration.busyMode {
            configuration.busyMode = .timeout(10)
        }
        return try DatabasePool(path: path, configuration: configuration)
    }

    private static func createOwnerOnlyFile(at path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else { return }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
            )
        }
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }
}
