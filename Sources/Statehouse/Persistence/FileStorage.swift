import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps each key's data in a file of its own, in one directory, readable by its owner only.
///
/// A save never leaves a torn file: the data goes to a temporary file in the same directory, which is flushed to
/// disk (`fsync`), renamed over the key's file (atomic on POSIX file systems), and the directory is flushed too.
/// A process killed at any instant leaves the old data or the new, never a mix.
///
/// Keys are encoded into file names, so that keys Swift calls equal share a file and keys it calls different never
/// do, whatever the file system folds:
///
/// - The key is first put in Unicode canonical composition (NFC): `"café"` typed precomposed or decomposed is one
///   `String` to Swift, and one file here.
/// - Lowercase ASCII letters, digits, `-` and `_` stay; every other byte of the key's UTF-8 becomes `%XX`, uppercase
///   letters included, so that `Theme` and `theme` stay two files on a case-insensitive volume (macOS's default)
///   and `../../etc/passwd` is the file `%2E%2E%2F%2E%2E%2Fetc%2Fpasswd.state` inside the directory.
/// - An empty key is `%.state`. A key whose encoding would exceed 200 bytes is cut, followed by a 64-bit FNV-1a hash
///   of the whole (normalized) key.
///
/// Files written under the first encoding (letters of both cases kept, no normalization) are still read, and are
/// replaced by the current name at the next save.
public struct FileStorage: StateStorage {
    /// The directory holding the files.
    public let directory: URL

    /// - Parameter directory: Created on first use (owner-only permissions) if it does not exist.
    public init(directory: URL) {
        self.directory = directory
    }

    public func load(key: String) throws -> Data? {
        try StorageError.catching(key: key, operation: .load, in: directory.path) {
            if let data = try read(fileURL(for: key)) { return data }
            return try legacyFileURL(for: key).flatMap(read)
        }
    }

    public func save(_ data: Data, key: String) throws {
        _ = try saveReturningFingerprint(data, key: key)
    }

    public func remove(key: String) throws {
        try StorageError.catching(key: key, operation: .remove, in: directory.path) {
            var removed = false
            for url in [fileURL(for: key), legacyFileURL(for: key)].compactMap(\.self) {
                if unlink(url.path) == 0 {
                    removed = true
                } else if errno != ENOENT {
                    throw posixError("remove \(url.lastPathComponent)")
                }
            }
            // Nothing to make durable when nothing was there (the directory may not even exist yet).
            if removed { try syncDirectory() }
        }
    }

    /// The file holding `key`'s data.
    public func fileURL(for key: String) -> URL {
        directory.appendingPathComponent(Self.fileName(for: key))
    }

    static func fileName(for key: String) -> String {
        encodedName(of: StorageKey.canonical(key), keeping: { $0 != .uppercase })
    }

    /// The names `key`'s file may have: the current encoding's, and the first encoding's if it differs.
    static func fileNames(for key: String) -> Set<String> {
        [fileName(for: key), encodedName(of: key, keeping: { _ in true })]
    }

    /// The file a key had under the first encoding, if it differs from the current one and is there under exactly
    /// that name. The listing tells: on a case-insensitive volume, opening `Theme.state` would open `theme.state`,
    /// the file of the key `theme`.
    private func legacyFileURL(for key: String) -> URL? {
        let legacy = Self.encodedName(of: key, keeping: { _ in true })
        guard legacy != Self.fileName(for: key),
            (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.contains(legacy) == true
        else { return nil }
        return directory.appendingPathComponent(legacy)
    }

    private enum LetterCase { case lowercase, uppercase, notALetter }

    /// `key` as a file name: ASCII letters (of the cases `keeping` accepts), digits, `-` and `_` stay; every other
    /// byte becomes `%XX`.
    private static func encodedName(of key: String, keeping keepLetter: (LetterCase) -> Bool) -> String {
        var encoded = ""
        for byte in key.utf8 {
            let letterCase: LetterCase = switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): .lowercase
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): .uppercase
            default: .notALetter
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                encoded.append(Character(Unicode.Scalar(byte)))
            case _ where letterCase != .notALetter && keepLetter(letterCase):
                encoded.append(Character(Unicode.Scalar(byte)))
            default:
                encoded += String(format: "%%%02X", byte)
            }
        }
        if encoded.isEmpty { encoded = "%" }
        if encoded.utf8.count > 200 {
            encoded = String(encoded.prefix(180)) + "~" + String(fnv1a(key), radix: 16)
        }
        return encoded + ".state"
    }

    /// The contents of `url`, or `nil` if there is no such file.
    private func read(_ url: URL) throws -> Data? {
        try readWithInfo(url)?.data
    }

    /// The contents of the regular file at `url` and what `fstat` says of it, both of the one open file; `nil` if
    /// there is no such file.
    ///
    /// Opened without blocking and refused unless it is a regular file: reading a named pipe left in the directory
    /// would wait for a writer that may never come, and a container would hang at its creation.
    private func readWithInfo(_ url: URL) throws -> (data: Data, info: stat)? {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            guard errno == ENOENT else { throw posixError("open \(url.lastPathComponent)") }
            return nil
        }
        let file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw posixError("inspect \(url.lastPathComponent)") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SystemCallFailure(what: "read \(url.lastPathComponent), which is not a regular file,", code: EINVAL)
        }
        return (try file.readToEnd() ?? Data(), info)
    }

    private static func fnv1a(_ key: String) -> UInt64 {
        key.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    func createDirectoryIfNeeded() throws {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
        )
    }

    /// Writes `data` to a new file at `url` and flushes it to disk; returns the file's fingerprint.
    private func writeDurably(_ data: Data, to url: URL) throws -> StorageFingerprint {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw posixError("create \(url.lastPathComponent)") }
        defer { close(descriptor) }
        try data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    let error = posixError("write \(url.lastPathComponent)")
                    unlink(url.path)
                    throw error
                }
                offset += written
            }
        }
        guard fsync(descriptor) == 0 else {
            let error = posixError("flush \(url.lastPathComponent) to disk")
            unlink(url.path)
            throw error
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let error = posixError("inspect \(url.lastPathComponent)")
            unlink(url.path)
            throw error
        }
        return Self.fingerprint(of: info)
    }

    private func syncDirectory() throws {
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw posixError("open the directory to flush it") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw posixError("flush the directory to disk") }
    }

    private func posixError(_ what: String) -> SystemCallFailure {
        SystemCallFailure(what: what, code: errno)
    }
}

extension FileStorage: ChangeDetectingStorage {
    /// The file's inode, size and modification time: every save renames a new file into place, so the inode alone
    /// changes on every save, even within one clock tick.
    public func fingerprint(key: String) throws -> StorageFingerprint {
        try StorageError.catching(key: key, operation: .fingerprint, in: directory.path) {
            var info = stat()
            guard stat(fileURL(for: key).path, &info) == 0 else {
                guard errno == ENOENT else { throw posixError("inspect \(fileURL(for: key).lastPathComponent)") }
                return .absent
            }
            return Self.fingerprint(of: info)
        }
    }

    /// Exact: the fingerprint is that of the open file the data is read from, so a save renaming another file into
    /// place meanwhile is not mistaken for the data read. (A file under the first encoding has the fingerprint
    /// ``fingerprint(key:)`` gives it: absent.)
    public func loadWithFingerprint(key: String) throws -> (data: Data?, fingerprint: StorageFingerprint) {
        try StorageError.catching(key: key, operation: .load, in: directory.path) {
            guard let (data, info) = try readWithInfo(fileURL(for: key)) else {
                return (try legacyFileURL(for: key).flatMap(read), .absent)
            }
            return (data, Self.fingerprint(of: info))
        }
    }

    /// Exact: the fingerprint is read from the new file before it is renamed into place (a rename keeps the inode,
    /// size and modification time), so a file another process renames over it afterwards never passes for ours.
    public func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try StorageError.catching(key: key, operation: .save, in: directory.path) {
            try saveDurably(data, key: key)
        }
    }

    private func saveDurably(_ data: Data, key: String) throws -> StorageFingerprint {
        try createDirectoryIfNeeded()
        let target = fileURL(for: key)
        let temporary = directory.appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).tmp")
        let fingerprint = try writeDurably(data, to: temporary)
        guard rename(temporary.path, target.path) == 0 else {
            let error = posixError("rename \(temporary.lastPathComponent) to \(target.lastPathComponent)")
            unlink(temporary.path)
            throw error
        }
        try syncDirectory()
        // The current name now holds the data: a file under the first encoding would only shadow a later removal.
        if let legacy = legacyFileURL(for: key) { unlink(legacy.path) }
        return fingerprint
    }

    private static func fingerprint(of info: stat) -> StorageFingerprint {
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        #else
        let modified = info.st_mtim
        #endif
        return StorageFingerprint([
            Int64(bitPattern: UInt64(info.st_ino)), Int64(info.st_size),
            Int64(modified.tv_sec), Int64(modified.tv_nsec),
        ])
    }
}

/// A system call that failed, with what it was doing; the cause of the `StorageError` a file storage throws.
struct SystemCallFailure: Error, CustomStringConvertible {
    let what: String
    let code: Int32

    var description: String { "\(what) failed: \(String(cString: strerror(code)))" }
}

extension StateStorage where Self == FileStorage {
    /// A storage that keeps each key in a file of its own in `directory`.
    public static func file(directory: URL) -> FileStorage {
        FileStorage(directory: directory)
    }
}
