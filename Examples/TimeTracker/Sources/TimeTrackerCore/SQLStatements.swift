/// A value bound to a statement, or read from a row: what timetrack's tables hold.
enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null

    var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// A number as a `Double`: SQLite gives `SUM` and `COALESCE(…, 0)` as an integer when no activity counts.
    var real: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}

/// The statements of one transaction (or one read), as each backend runs them: the rules, the actions, the snapshot
/// and the trash are written once against this, in SQL that SQLite and PostgreSQL read alike.
///
/// Placeholders are `?`, in order (the PostgreSQL backend numbers them); rows come back as their columns in the order
/// selected, since PostgreSQL folds unquoted column names to lowercase and SQLite does not.
protocol SQLStatements {
    /// What makes `ORDER BY` compare text byte by byte, as SQLite always does: ` COLLATE "C"` on PostgreSQL, whose
    /// default follows the database's locale.
    var binaryCollation: String { get }

    /// The rows `sql` returns.
    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [[SQLValue]]

    /// The last id `table` gave a row (0 if none): the next row's is above it, even when that row is gone.
    func lastGeneratedID(in table: String) throws -> Int64
}

extension SQLStatements {
    /// Runs `sql` for its effect.
    func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        _ = try rows(sql, arguments)
    }

    /// The first column of the first row, if there is a row.
    func value(_ sql: String, _ arguments: [SQLValue]) throws -> SQLValue? {
        try rows(sql, arguments).first?.first
    }
}
