/// A failure to load or save persisted state, with what to do about it.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, to match on.
    public enum Kind: Sendable, Equatable {
        /// The stored bytes could not be decoded as the container's value: a corrupt file, or a type that changed.
        /// The container started from its default, and the bytes were kept aside.
        case undecodable
        /// Reading or writing failed: a missing permission, a full disk, a read-only directory.
        case io
        /// The value could not be encoded.
        case unencodable
    }

    public let kind: Kind
    /// The state key concerned, when known.
    public let key: String?
    /// What happened and what to do.
    public let message: String

    public init(_ kind: Kind, key: String?, message: String) {
        self.kind = kind
        self.key = key
        self.message = message
    }

    public var description: String { message }
}
