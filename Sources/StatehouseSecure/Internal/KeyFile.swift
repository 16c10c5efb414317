import Foundation
import Statehouse
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file an ``EncryptionKey`` is kept in: read with its checks, or created exclusively.
struct KeyFile {
    let url: URL

    /// The file's bytes, or `nil` if there is no file.
    ///
    /// The checks are made on the open file (`fstat`), so that they hold for the bytes read, even if the path is
    /// replaced meanwhile.
    func load() throws(StorageError) -> Data? {
        // Non-blocking: opening a named pipe to read would wait for a writer; it is refused below instead.
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT {
                try refuseDanglingLink()
                return nil
            }
            throw posixError("open the key file")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw posixError("inspect the key file") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw EncryptionKey.invalid("The key file \(url.path) is not a regular file. Point to the key file itself.")
        }
        // Whoever owns the file chose the key (root can read anyone's file): only ours, or root's, is trusted.
        let user = geteuid()
        guard info.st_uid == user || info.st_uid == 0 else {
            throw EncryptionKey.invalid("""
                The key file \(url.path) is owned by user \(info.st_uid), not by this process's user (\(user)): \
                whoever owns it chose the key values would be sealed with. If the file is yours, run \
                `chown \(user) \(url.path)`; otherwise remove it and restore the key from where you keep its copy.
                """)
        }
        let permissions = info.st_mode & 0o777
        guard permissions & 0o077 == 0 else {
            throw EncryptionKey.invalid("""
                The key file \(url.path) may be accessed by group or others (mode \(String(permissions, radix: 8))): \
                anyone who reads it reads every value sealed with it. Run `chmod 600 \(url.path)`, and replace the \
                key if it may have been read.
                """)
        }
        guard info.st_size == EncryptionKey.byteCount else { throw wrongSize(Int(info.st_size)) }
        // One byte more than a key, to tell a file that grew after the check.
        var bytes = [UInt8](repeating: 0, count: EncryptionKey.byteCount + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw posixError("read the key file") }
            if got == 0 { break }
            count += got
        }
        guard count == EncryptionKey.byteCount else { throw wrongSize(count) }
        return Data(bytes.prefix(count))
    }

    /// Creates the file holding `key`, unless a file is there already.
    ///
    /// - Returns: `false` if a file was there (another thread or process won the race); nothing was changed then.
    func create(_ key: Data) throws(StorageError) -> Bool {
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw StorageError(.io, key: nil, operation: .open, message: """
                Could not create the folder \(directory.path) for the key file: \(error). Create it, or choose \
                another place for the key file.
                """, cause: error)
        }
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        defer { unlink(temporary.path) }
        try writeDurably(key, to: temporary)
        // link(2) fails if the name exists: an exclusive create of a file already complete on disk.
        guard link(temporary.path, url.path) == 0 else {
            if errno == EEXIST { return false }
            throw posixError("create the key file")
        }
        try syncDirectory(directory)
        return true
    }

    /// Throws if the path is a symbolic link to nothing (a secret volume not mounted yet): a key created there would
    /// be made wherever the link points, or not at all.
    private func refuseDanglingLink() throws(StorageError) {
        guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: url.path) else { return }
        throw EncryptionKey.invalid("""
            The key file \(url.path) is a symbolic link to \(destination), which does not exist. Mount or create \
            the key file there, or point to the key file itself.
            """)
    }

    private func writeDurably(_ key: Data, to temporary: URL) throws(StorageError) {
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw posixError("create a temporary key file") }
        defer { close(descriptor) }
        var written = 0
        while written < key.count {
            let count = key.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw posixError("write the key file") }
            written += count
        }
        // Values are sealed with the key as soon as this returns: it must outlive a crash of the machine.
        guard fsync(descriptor) == 0 else { throw posixError("flush the key file to disk") }
    }

    private func syncDirectory(_ directory: URL) throws(StorageError) {
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw posixError("open the key file's folder") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw posixError("flush the key file's folder to disk") }
    }

    private func wrongSize(_ count: Int) -> StorageError {
        EncryptionKey.invalid("""
            The key file \(url.path) holds \(count) bytes; a key file holds exactly \(EncryptionKey.byteCount). It is \
            not a Statehouse key file, or it was damaged: restore it from where you keep its copy.
            """)
    }

    private func posixError(_ what: String) -> StorageError {
        let code = errno
        return StorageError(
            .io, key: nil, operation: .open,
            message: "Could not \(what) \(url.path): \(String(cString: strerror(code))). Check its folder's permissions.",
            cause: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        )
    }
}
