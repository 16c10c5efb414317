import Foundation
import Statehouse

extension EncryptionKey {
    /// The key kept in the file at `url`; on first use, a new random key, kept there readable by its owner only.
    ///
    /// The file holds the key's 32 bytes and nothing else, with mode `0600`; its folder is created (mode `0700`) if
    /// it does not exist. Threads and processes that race to create it all end up with one key: the new file is
    /// written and flushed to disk under a temporary name, then linked to `url` only if nothing is there yet (an
    /// exclusive create, like `O_EXCL`), so that no one ever reads a half-written key; whoever loses the race reads
    /// the winner's file.
    ///
    /// ```swift
    /// let key = try EncryptionKey.loadOrCreate(at: URL(fileURLWithPath: "/var/lib/app/state.key"))
    /// let secrets = EncryptedStorage(directory: URL(fileURLWithPath: "/var/lib/app/secrets"), key: key)
    /// ```
    ///
    /// Keep the key file out of the data directory and out of backups that travel with the data: whoever holds
    /// both reads everything. Losing the file loses every value sealed with it.
    ///
    /// - Parameter url: The key file. A symbolic link is followed (secret volumes mount keys that way); the checks
    ///   apply to the file it leads to.
    /// - Throws: `StorageError` of kind `.invalidConfiguration` for a file that is not 32 bytes, is not a regular
    ///   file (a folder, a named pipe), that group or others may access (fix it with `chmod 600`), that another user
    ///   than this process's (or root) owns, or a symbolic link to nothing; `.io` if it cannot be read or created.
    public static func loadOrCreate(at url: URL) throws(StorageError) -> EncryptionKey {
        let file = KeyFile(url: url)
        if let existing = try file.load() { return try EncryptionKey(bytes: existing) }
        let created = EncryptionKey.random()
        if try file.create(created.bytes) { return created }
        // Another thread or process created the file first: its key is the one.
        guard let winner = try file.load() else {
            throw StorageError(.io, key: nil, operation: .open, message: """
                The key file \(url.path) was created by someone else and removed again before it could be read. \
                Check what else manages that file, then try again.
                """)
        }
        return try EncryptionKey(bytes: winner)
    }
}
