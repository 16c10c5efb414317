import Crypto
import Foundation

/// A state key as the table holds it.
///
/// The row is found by the SHA-256 digest of the key's canonical composition (NFC): keys that Swift calls equal
/// (`"café"` precomposed or decomposed) share a row, a key of any length fits the primary key's index (a text key
/// longer than about 2,700 bytes would not), and a `NOTIFY` payload naming it stays small. The key's text is kept
/// beside it for people reading the table, with NUL, which a PostgreSQL text cannot hold, shown as `␀`.
struct StoredKey: Sendable, Hashable {
    /// Identifies the row.
    let digest: Data
    /// What the `key` column shows.
    let text: String

    init(_ key: String) {
        let canonical = key.utf8.allSatisfy { $0 < 0x80 } ? key : key.precomposedStringWithCanonicalMapping
        digest = Data(SHA256.hash(data: Data(canonical.utf8)))
        text = canonical.contains("\u{0}") ? canonical.replacingOccurrences(of: "\u{0}", with: "\u{2400}") : canonical
    }

    /// The digest as the notifications spell it: lowercase hexadecimal, as PostgreSQL's `encode(…, 'hex')`.
    var hexDigest: String {
        digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 0x10 ? "0" + hex : hex
        }.joined()
    }
}
