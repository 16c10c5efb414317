import Foundation

/// A storage key no other test uses: `name` followed by a UUID.
func uniqueKey(_ name: String) -> String {
    "\(name).\(UUID().uuidString)"
}
