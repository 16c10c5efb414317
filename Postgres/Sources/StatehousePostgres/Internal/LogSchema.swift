/// The migrations that make a replicated store's action log, its head and its snapshots (applied by ``Schema``).
enum LogSchema {
    static func migrations(for names: LogNames) -> [Schema.Migration] {
        let (log, head, snapshots, trigger) = (names.log, names.head, names.snapshots, names.trigger)
        return [
            (
                // Not "create": a state table's migrations are recorded under its name too.
                "log.create",
                [
                    // (origin, local) names an action once, so that an append whose answer was lost can be looked
                    // up instead of made twice.
                    """
                    CREATE TABLE \(log) (
                        sequence bigint PRIMARY KEY,
                        origin uuid NOT NULL,
                        local bigint NOT NULL,
                        action bytea NOT NULL,
                        appended_at timestamptz NOT NULL DEFAULT now(),
                        UNIQUE (origin, local)
                    )
                    """,
                    // A sequence object would leave gaps (a rolled-back append keeps its number). An append updates
                    // this row in its own transaction: appenders wait for each other's commit, so numbers have no
                    // gaps and commit in order, and a reader that sees number n sees every number before it.
                    "CREATE TABLE \(head) (sequence bigint NOT NULL)",
                    "INSERT INTO \(head) (sequence) VALUES (0)",
                    """
                    CREATE TABLE \(snapshots) (
                        sequence bigint PRIMARY KEY,
                        state bytea NOT NULL,
                        taken_at timestamptz NOT NULL DEFAULT now()
                    )
                    """,
                    // One notification per append statement, with its last sequence number: never the action.
                    """
                    CREATE FUNCTION \(trigger)() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        PERFORM pg_notify('\(log)', (SELECT max(sequence) FROM appended)::text);
                        RETURN NULL;
                    END
                    $$
                    """,
                    """
                    CREATE TRIGGER \(trigger) AFTER INSERT ON \(log)
                    REFERENCING NEW TABLE AS appended FOR EACH STATEMENT EXECUTE FUNCTION \(trigger)()
                    """,
                ]
            ),
        ]
    }
}
