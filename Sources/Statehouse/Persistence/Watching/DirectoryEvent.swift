/// What the kernel says about a watched directory.
enum DirectoryEvent: Sendable, Equatable {
    /// These entries were created, removed, renamed, written to, or closed after writing.
    case changed(Set<String>)
    /// Events were lost (the kernel's queue overflowed): any entry may have changed.
    case unknown
    /// The directory was removed or moved away: the kernel no longer watches it.
    case gone
}

/// Why a directory cannot be watched.
package struct FileWatchFailure: Error, CustomStringConvertible {
    /// What was being done, why it failed, and what to do.
    package let description: String

    package init(description: String) {
        self.description = description
    }
}
