import Logging
import PostgresNIO

/// Creates a state table, its version sequence and its notification trigger, once per database, whichever process
/// gets there first.
///
/// Each step is a named migration recorded in `statehouse_migrations`, so that later versions can add steps that run
/// once on tables made by earlier ones. Everything runs in one transaction that first takes an advisory lock, so two
/// processes starting at once do not both create the table (`CREATE … IF NOT EXISTS` is not safe against that).
enum Schema {
    /// The advisory lock all migrations of Statehouse take: "Statehou" in ASCII, an arbitrary constant.
    private static let lock: Int64 = 0x5374_6174_6568_6F75

    /// A migration's name, and its statements (one per query: the extended protocol takes one at a time).
    typealias Migration = (name: String, statements: [String])

    /// The steps that make `names.table`, in order.
    static func migrations(for names: TableNames) -> [Migration] {
        let (table, sequence, trigger) = (names.table, names.sequence, names.trigger)
        return [
            (
                "create",
                [
                    // Versions come from one sequence for the whole table, so that a key removed and written again
                    // never shows an earlier version (a follower would take the new data for what it has).
                    "CREATE SEQUENCE \(sequence)",
                    """
                    CREATE TABLE \(table) (
                        key_digest bytea PRIMARY KEY,
                        key text NOT NULL,
                        value bytea,
                        version bigint NOT NULL,
                        updated_at timestamptz NOT NULL DEFAULT now()
                    )
                    """,
                    // A removed key keeps its row with a NULL value (a tombstone), so that its removal has a version
                    // too. A commit is announced with its version and the key's digest, never the value, which may
                    // be larger than NOTIFY's 8,000 bytes; nothing is announced when nothing visible changed.
                    """
                    CREATE FUNCTION \(trigger)() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF TG_OP = 'DELETE' THEN
                            PERFORM pg_notify('\(table)', '- ' || encode(OLD.key_digest, 'hex'));
                        ELSIF NEW.value IS NOT NULL OR (TG_OP = 'UPDATE' AND OLD.value IS NOT NULL) THEN
                            PERFORM pg_notify('\(table)', NEW.version || ' ' || encode(NEW.key_digest, 'hex'));
                        END IF;
                        RETURN NULL;
                    END
                    $$
                    """,
                    """
                    CREATE TRIGGER \(trigger) AFTER INSERT OR UPDATE OR DELETE ON \(table)
                    FOR EACH ROW EXECUTE FUNCTION \(trigger)()
                    """,
                ]
            ),
        ]
    }

    /// Applies the migrations of `names.table` that this database has not seen, on `connection`.
    static func migrate(_ names: TableNames, on connection: PostgresConnection, logger: Logger) async throws {
        try await migrate(names.table, migrations(for: names), on: connection, logger: logger)
    }

    /// Applies those of `migrations`, recorded under `table`, that this database has not seen, on `connection`.
    static func migrate(
        _ table: String,
        _ migrations: [Migration],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.run("BEGIN", logger: logger)
        do {
            _ = try await connection.rows("SELECT pg_advisory_xact_lock(\(lock))", logger: logger)
            try await connection.run(
                """
                CREATE TABLE IF NOT EXISTS statehouse_migrations (
                    table_name text NOT NULL,
                    migration text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (table_name, migration)
                )
                """,
                logger: logger
            )
            let applied = Set(try await connection.rows(
                "SELECT migration FROM statehouse_migrations WHERE table_name = \(table)", logger: logger
            ).map { try $0.decode(String.self) })
            for migration in migrations where !applied.contains(migration.name) {
                for statement in migration.statements {
                    try await connection.run(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.run(
                    """
                    INSERT INTO statehouse_migrations (table_name, migration) VALUES (\(table), \(migration.name))
                    """,
                    logger: logger
                )
            }
            try await connection.run("COMMIT", logger: logger)
        } catch {
            await Transaction.rollBack(connection, after: error, logger: logger)
            throw error
        }
    }
}
