/// A failure to load or save persisted state, with what to do about it.
///
/// Every storage Statehouse ships throws only `StorageError`: match on ``kind`` and ``operation``, read ``key``, and
/// find the error the storage got from below (a Foundation, POSIX, GRDB or crypto error) in ``cause``.
///
/// ```swift
/// do {
///     try settings.flush()
/// } catch let error where error.kind == .io {
///     logger.error("\(error)")    // says what happened and what to do; never contains the value
/// }
/// ```
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
        /// Sealed data failed its authentication: it was tampered with, copied from another key, or sealed with
        /// another encryption key. Nothing of it was used.
        case authenticationFailed
        /// The storage cannot work as configured: a database that does not open, a key of the wrong size.
        case invalidConfiguration
    }

    /// What the storage was doing when it failed.
    public enum Operation: String, Sendable, Equatable {
        case open, load, save, remove, transact, fingerprint, encode, decode
        /// Starting to watch for changes others make (``ChangeNotifyingStorage``).
        case watch
    }

    public let kind: Kind
    /// The state key concerned, when known.
    public let key: String?
    /// What the storage was doing, when known.
    public let operation: Operation?
    /// What happened and what to do.
    public let message: String
    /// The error the storage got from below, if any.
    ///
    /// Never one of Foundation's `EncodingError` or `DecodingError`, which carry the value or quote the data: such
    /// a cause is kept as a ``CodingFailure``, which says the kind of failure, the type and where, and nothing of
    /// the value. So neither `"\(error.cause!)"` nor `dump(error)` can show a secret.
    public let cause: (any Error)?
    /// Where the storage kept the bytes it could not use (undecodable or unauthentic), so that no later save
    /// overwrites them; `nil` if it kept nothing aside.
    public let keptAside: String?

    public init(
        _ kind: Kind,
        key: String?,
        operation: Operation? = nil,
        message: String,
        cause: (any Error)? = nil,
        keptAside: String? = nil
    ) {
        self.kind = kind
        self.key = key
        self.operation = operation
        self.message = message
        self.cause = cause.map(CodingFailure.keepable)
        self.keptAside = keptAside
    }

    public var description: String { message }

    /// Equal when they say the same thing: the kind, key, operation, message and where the bytes were kept. The
    /// causes are compared by their descriptions (errors are not `Equatable`).
    public static func == (lhs: StorageError, rhs: StorageError) -> Bool {
        lhs.kind == rhs.kind && lhs.key == rhs.key && lhs.operation == rhs.operation && lhs.message == rhs.message
            && lhs.keptAside == rhs.keptAside && lhs.cause.map { "\($0)" } == rhs.cause.map { "\($0)" }
    }
}

extension StorageError {
    /// Runs `body`, a storage's own work on `key`, and throws what fails as a `StorageError`: an error that is one
    /// already passes unchanged; any other becomes an ``Kind/io`` error for `key` and `operation`, kept as its
    /// ``cause``.
    ///
    /// For storages of your own, so that they throw only `StorageError`, as Statehouse's do:
    ///
    /// ```swift
    /// public func load(key: String) throws -> Data? {
    ///     try StorageError.catching(key: key, operation: .load) { try client.get(key) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - key: The state key the storage works on, if any.
    ///   - operation: What the storage does.
    ///   - place: Where the storage keeps its data (a directory, a database), for the message.
    ///   - body: The storage's work.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, as a `StorageError`.
    public static func catching<Result>(
        key: String?,
        operation: Operation,
        in place: String? = nil,
        _ body: () throws -> Result
    ) throws(StorageError) -> Result {
        do {
            return try body()
        } catch let error as StorageError {
            throw error
        } catch {
            let subject = key.map { " \(String(reflecting: $0))" } ?? ""
            let location = place.map { " in \($0)" } ?? ""
            throw StorageError(
                .io, key: key, operation: operation,
                message: "Could not \(operation.rawValue)\(subject)\(location): \(CodingFailure.describe(error)).",
                cause: error
            )
        }
    }
}
