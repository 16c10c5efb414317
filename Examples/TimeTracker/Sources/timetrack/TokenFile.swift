import Foundation

/// `--token-file PATH`: an access token kept in a file only its owner may read, as SSH keeps keys.
enum TokenFile {
    /// The token in the file at `path`.
    /// - Throws: A `ValidationError` saying what to do when the file is missing, empty, or readable by others.
    static func read(_ path: String) throws -> String {
        guard FileManager.default.fileExists(atPath: path) else {
            throw TokenFileError("There is no token file at \(path): copy the server's (`timetrack serve --token-file` makes one).")
        }
        try checkOwnerOnly(path)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let token = text.split(whereSeparator: \.isNewline).first.map({ $0.trimmingCharacters(in: .whitespaces) }),
              !token.isEmpty
        else {
            throw TokenFileError("The token file \(path) holds no token on its first line.")
        }
        return token
    }

    /// The token in the file at `path`, made (owner-only, with `make`'s token) if there is no file.
    static func readOrCreate(_ path: String, making make: () -> String) throws -> String {
        let token = make()
        // O_EXCL: of two servers starting at once, one makes the file and the other reads it.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            guard errno == EEXIST else {
                throw TokenFileError("Cannot make the token file \(path): \(String(cString: strerror(errno))).")
            }
            return try read(path)
        }
        defer { close(descriptor) }
        let line = Array((token + "\n").utf8)
        guard write(descriptor, line, line.count) == line.count, fsync(descriptor) == 0 else {
            throw TokenFileError("Cannot write the token file \(path): \(String(cString: strerror(errno))).")
        }
        return token
    }

    private static func checkOwnerOnly(_ path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw TokenFileError("Cannot read the token file \(path): \(String(cString: strerror(errno))).")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw TokenFileError("The token file \(path) may be read by others: make it the owner's only (chmod 600 \(path)).")
        }
    }
}

/// Why a token file cannot be used, and what to do.
struct TokenFileError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
