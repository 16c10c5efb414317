import Foundation

/// How the storages of Statehouse compare keys: as Swift compares strings.
///
/// Swift calls two strings equal when they are canonically equivalent: `"café"` typed with `é` (U+00E9) or with `e`
/// and a combining acute accent (U+0301) is one `String`. File systems, SQLite and `UserDefaults` compare keys by
/// their bytes or UTF-16 code units, which would make those two keys. So every storage keeps a key under its
/// canonical composition (NFC), and keys Swift calls different (`"Theme"` and `"theme"`, `"ﬁle"` and `"file"`,
/// `"a"` and `"a\0b"`) stay apart.
package enum StorageKey {
    /// `key` in Unicode canonical composition (NFC): the form under which a storage keeps it.
    package static func canonical(_ key: String) -> String {
        // ASCII is its own canonical composition: skip the (costly) normalization for the usual keys.
        key.utf8.allSatisfy { $0 < 0x80 } ? key : key.precomposedStringWithCanonicalMapping
    }

    /// The key under which a value saved before the storage composed its keys may still be kept: `key` itself, if
    /// that differs from its composition in its scalars (which Swift's `==` does not see).
    package static func legacy(_ key: String) -> String? {
        canonical(key).unicodeScalars.elementsEqual(key.unicodeScalars) ? nil : key
    }
}
