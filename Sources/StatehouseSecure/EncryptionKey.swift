import Crypto
import Foundation
import Statehouse

/// A 256-bit key that ``EncryptedStorage`` seals values with.
///
/// Keep it apart from the data it protects: in a key file readable by its owner only (``loadOrCreate(at:)``), or in
/// an environment variable or a secret manager (``init(base64Encoded:)``). Its description never shows its bytes, so
/// logging or printing a key does not leak it.
///
/// ```swift
/// let key = try EncryptionKey.loadOrCreate(at: keyFileURL)             // created on first use, mode 0600
/// let fromEnvironment = try EncryptionKey(base64Encoded: environment["APP_STATE_KEY"] ?? "")
/// ```
// @unchecked: the only stored property is a `SymmetricKey`, an immutable value whose bytes are never changed after
// its init; swift-crypto 4 declares it `Sendable`, the 3.x releases this package accepts do not yet.
public struct EncryptionKey: @unchecked Sendable {
    /// The size of a key, in bytes (256 bits).
    public static let byteCount = 32

    let symmetricKey: SymmetricKey

    private init(_ symmetricKey: SymmetricKey) {
        self.symmetricKey = symmetricKey
    }

    /// A key made of `bytes`, which must be exactly ``byteCount`` (32) random bytes.
    ///
    /// - Parameter bytes: The key, from a secret manager, say.
    /// - Throws: `StorageError` of kind `.invalidConfiguration` if `bytes` is not 32 bytes long.
    public init(bytes: some ContiguousBytes) throws(StorageError) {
        let count = bytes.withUnsafeBytes(\.count)
        guard count == Self.byteCount else {
            throw Self.invalid("An encryption key must be \(Self.byteCount) bytes (256 bits), not \(count).")
        }
        self.init(SymmetricKey(data: bytes))
    }

    /// A key given as base64 text, as an environment variable or a secret manager holds it.
    ///
    /// Whitespace around the text (the newline a file or `echo` adds) is ignored. Make a key with
    /// `openssl rand -base64 32`.
    ///
    /// - Parameter text: The key's 32 bytes in base64 (44 characters).
    /// - Throws: `StorageError` of kind `.invalidConfiguration` if the text is not base64 or not 32 bytes. The
    ///   message never repeats the text.
    public init(base64Encoded text: String) throws(StorageError) {
        guard let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Self.invalid("The encryption key is not base64 text. Make one with `openssl rand -base64 32`.")
        }
        try self.init(bytes: bytes)
    }

    /// A new random key, from the system's secure random number generator.
    ///
    /// Keep it: values sealed with a key cannot be opened without it. ``loadOrCreate(at:)`` makes one and keeps it
    /// in a file.
    public static func random() -> EncryptionKey {
        EncryptionKey(SymmetricKey(size: .bits256))
    }

    /// The key's bytes, to keep in its file; never shown.
    var bytes: Data {
        symmetricKey.withUnsafeBytes { Data($0) }
    }

    static func invalid(_ message: String) -> StorageError {
        StorageError(.invalidConfiguration, key: nil, operation: .open, message: message)
    }
}

extension EncryptionKey: Equatable {
    /// Equal when the bytes are; compared in constant time.
    public static func == (lhs: EncryptionKey, rhs: EncryptionKey) -> Bool {
        lhs.symmetricKey == rhs.symmetricKey
    }
}

/// Printing, logging, `dump` and the debugger show that there is a key, never its bytes.
extension EncryptionKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "EncryptionKey(256 bits, redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
