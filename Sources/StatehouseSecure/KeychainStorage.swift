#if canImport(Security)
import Foundation
import Security
import Statehouse

/// Keeps each key's data in a generic password item of the Keychain, on Apple platforms.
///
/// ```swift
/// let token = StateContainer<String?>(nil, key: "apiToken", storage: KeychainStorage(service: "com.example.app"))
/// ```
///
/// Each state key is the `account` of an item of class `kSecClassGenericPassword` under `service`; `nil` (for an
/// optional value) deletes the item. Items are accessible after the first unlock of the device
/// (`kSecAttrAccessibleAfterFirstUnlock`), so that background work can read them. The Keychain encrypts them and
/// keeps them out of reach of other apps; it does not tell a container when another process changed an item, so
/// containers on it do not follow outside changes.
///
/// > Important: Untested here. This storage is compiled only where the `Security` framework exists (Apple
/// > platforms); the project's builds and tests run on Linux, where it is left out. Run your own tests on a device or
/// > simulator before relying on it.
public struct KeychainStorage: StateStorage {
    /// The service the items are filed under, usually the app's bundle identifier.
    public let service: String
    /// The access group shared with other apps of the same team, if any.
    public let accessGroup: String?

    /// - Parameters:
    ///   - service: The items' `kSecAttrService`, usually the app's bundle identifier.
    ///   - accessGroup: A keychain access group to share the items with other apps of the team (needs the
    ///     entitlement); `nil` for the app's own.
    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    public func load(key: String) throws(StorageError) -> Data? {
        var query = itemQuery(for: key)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess:
            guard let data = result as? Data else {
                throw StorageError(.io, key: key, operation: .load, message: """
                    The Keychain item of \(String(reflecting: key)) (service \(String(reflecting: service))) holds no \
                    data. Remove it, and save the value again.
                    """)
            }
            return data
        case errSecItemNotFound:
            return nil
        default:
            throw failure(status, .load, key)
        }
    }

    public func save(_ data: Data, key: String) throws(StorageError) {
        let update = [kSecValueData as String: data]
        var status = SecItemUpdate(itemQuery(for: key) as CFDictionary, update as CFDictionary)
        if status == errSecItemNotFound {
            var item = itemQuery(for: key)
            item[kSecValueData as String] = data
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
            status = SecItemAdd(item as CFDictionary, nil)
            // Another process added the item between the two calls: replace its data.
            if status == errSecDuplicateItem {
                status = SecItemUpdate(itemQuery(for: key) as CFDictionary, update as CFDictionary)
            }
        }
        guard status == errSecSuccess else { throw failure(status, .save, key) }
    }

    public func remove(key: String) throws(StorageError) {
        let status = SecItemDelete(itemQuery(for: key) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw failure(status, .remove, key) }
    }

    /// What identifies the item of `key`.
    private func itemQuery(for key: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private func failure(_ status: OSStatus, _ operation: StorageError.Operation, _ key: String) -> StorageError {
        StorageError(.io, key: key, operation: operation, message: """
            The Keychain could not \(operation.rawValue) the item of \(String(reflecting: key)) (service \
            \(String(reflecting: service))): OSStatus \(status). Check that the device is unlocked and that the app \
            has the keychain entitlements it needs.
            """, cause: NSError(domain: NSOSStatusErrorDomain, code: Int(status)))
    }
}
#endif
