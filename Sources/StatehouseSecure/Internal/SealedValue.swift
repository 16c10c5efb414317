import Crypto
import Foundation
import Statehouse

/// The bytes ``EncryptedStorage`` keeps for a value: a format byte, then an AES-256-GCM sealed box.
///
/// ```
/// format (1 byte, 1) | nonce (12 bytes, random) | ciphertext (as long as the value) | tag (16 bytes)
/// ```
///
/// The associated data is the format byte followed by the state key's UTF-8 in canonical composition (NFC, as
/// `FileStorage` names its files): a value opens only under the key it was sealed for, in the format it was
/// sealed in. A later format gets another first byte; this one stays readable.
enum SealedValue {
    static let format: UInt8 = 1
    private static let overhead = 1 + 12 + 16

    /// Why sealed bytes did not open; the cause of the storage's error (it names no value).
    enum OpenFailure: Error, CustomStringConvertible {
        case tooShort(Int)
        case unknownFormat(UInt8)
        case authentication

        var description: String {
            switch self {
            case .tooShort(let count): "\(count) bytes, shorter than any sealed value (\(SealedValue.overhead))"
            case .unknownFormat(let format): "format \(format), which this version of StatehouseSecure does not read"
            case .authentication: "the authentication tag does not match"
            }
        }
    }

    static func seal(_ plaintext: Data, for key: String, with encryptionKey: EncryptionKey) throws -> Data {
        let box = try AES.GCM.seal(plaintext, using: encryptionKey.symmetricKey, authenticating: associatedData(key))
        var sealed = Data(capacity: overhead + plaintext.count)
        sealed.append(format)
        sealed.append(contentsOf: box.nonce)
        sealed.append(box.ciphertext)
        sealed.append(box.tag)
        return sealed
    }

    /// The value sealed in `sealed` for `key`, and the index of the first of `keys` that opened it.
    static func open(_ sealed: Data, for key: String, with keys: [EncryptionKey]) throws(OpenFailure) -> (Data, Int) {
        guard sealed.count >= overhead else { throw .tooShort(sealed.count) }
        guard sealed.first == format else { throw .unknownFormat(sealed.first ?? 0) }
        guard let box = try? AES.GCM.SealedBox(combined: sealed.dropFirst()) else { throw .tooShort(sealed.count) }
        let authenticated = associatedData(key)
        for (index, candidate) in keys.enumerated() {
            if let opened = try? AES.GCM.open(box, using: candidate.symmetricKey, authenticating: authenticated) {
                return (opened, index)
            }
        }
        throw .authentication
    }

    private static func associatedData(_ key: String) -> Data {
        var data = Data([format])
        data.append(contentsOf: StorageKey.canonical(key).utf8)
        return data
    }
}
