import Foundation

extension StorageConformance {
    /// Where one check's storages keep their data: a directory and a name that no other check uses.
    ///
    /// Every instance a check makes gets the same place, so that the instances share their data. The directory does
    /// not exist yet (a storage creates what it needs inside it) and is removed with everything in it after the
    /// check. A storage that does not live in files uses ``name`` instead: for a `UserDefaults` suite, a database
    /// table, a Keychain service.
    public struct Place: Sendable, CustomStringConvertible {
        /// A directory for everything the storage keeps on disk; the storage may create it.
        public let directory: URL
        /// A name of this check's own: letters, digits and dots only.
        public let name: String

        init(directory: URL, name: String) {
            self.directory = directory
            self.name = name
        }

        public var description: String { directory.path }
    }
}
