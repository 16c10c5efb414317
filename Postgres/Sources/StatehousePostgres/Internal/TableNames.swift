import Statehouse

/// The names of one state table and of the objects that go with it, checked once: they are written into SQL (an
/// identifier cannot be a bound parameter), so only lowercase letters, digits and underscores get there.
struct TableNames: Sendable {
    /// The table, and the `NOTIFY` channel that announces its commits.
    let table: String
    /// The sequence every write takes its version from.
    let sequence: String
    /// The trigger, and its function, that announce each commit.
    let trigger: String

    /// Leaves room for the longest suffix within PostgreSQL's 63 bytes for an identifier.
    static let maximumLength = 48

    init(validating name: String) throws(StorageError) {
        table = try Self.validated(name, by: "PostgresStorage", example: "statehouse_state")
        sequence = "\(name)_version"
        trigger = "\(name)_notify"
    }

    /// `name`, if it is an identifier that can be written into SQL as it is, with room for a suffix.
    ///
    /// - Parameters:
    ///   - user: The type whose name it is, for the message.
    ///   - example: A valid name, for the message.
    /// - Throws: `StorageError.Kind.invalidConfiguration` (operation `.open`) saying what a valid name is.
    static func validated(_ name: String, by user: String, example: String) throws(StorageError) -> String {
        let isValid = (1...maximumLength).contains(name.utf8.count)
            && name.utf8.first.map { $0 == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) } == true
            && name.utf8.allSatisfy { byte in
                byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            }
        guard isValid else {
            throw StorageError(
                .invalidConfiguration, key: nil, operation: .open,
                message: """
                    \(String(reflecting: name)) is not a table name \(user) accepts: use 1 to \
                    \(maximumLength) lowercase letters, digits and underscores, starting with a letter or an \
                    underscore (for example "\(example)").
                    """
            )
        }
        return name
    }
}
