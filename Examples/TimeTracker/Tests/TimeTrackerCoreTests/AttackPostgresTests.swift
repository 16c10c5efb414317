import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// Attacks on the PostgreSQL backend: answers that come late or never, databases that cannot hold every name,
/// URLs that hide a password where it is not expected, trackers that are closed.
@Suite(
    "Attacks on the PostgreSQL backend", .serialized,
    .enabled(if: TemporaryPostgresDatabase.isInstalled, "PostgreSQL is not installed: apt-get install postgresql (scripts/prerequisites does it)")
)
struct AttackPostgresTests {
    /// A statement that outlasts the statement timeout (here: an insert a trigger slows down, as a server under
    /// load or a network that stalls would) fails the action. Its transaction must end with it: not stay open on a
    /// connection the pool hands to the next action, where the failed action's insert would be committed with the
    /// next one's, and the write lock it holds would keep every other tracker, even one opening, out.
    @Test func anActionWhoseStatementTimedOutNeverLandsAndHoldsNoLock() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await TimeTracker.open(
            postgres: database.url, lockTimeout: .seconds(1), statementTimeout: .seconds(3)
        )
        try database.sql("""
            CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.name = 'Timed out' THEN PERFORM pg_sleep(8); END IF; RETURN NEW; END $$;
            CREATE TRIGGER slow_insert BEFORE INSERT ON project FOR EACH ROW EXECUTE FUNCTION slow_insert();
            """)
        await #expect(throws: TrackerError.self) { try await tracker.perform(.addProject(name: "Timed out")) }
        // The slow insert ends on the server.
        #expect(await eventually {
            (try? database.sql("""
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND state = 'active' AND query LIKE 'INSERT INTO project%'
                """)) == "0"
        })

        // Another tracker (another server) writes within its usual lock timeout.
        let other = try await database.tracker()
        try await other.perform(.addProject(name: "Other"))
        // And this tracker's next action carries nothing of the failed one. (Its statements have 3 s each: on a
        // loaded machine one may time out too, and is then tried again; none may land unreported.)
        var next: ProjectSummary?
        for _ in 0..<5 where next == nil {
            do throws(TrackerError) {
                next = try await tracker.perform(.addProject(name: "Next"))
            } catch .duplicateName {
                Issue.record("an attempt reported failed had landed")
                break
            } catch {
                continue
            }
        }
        #expect(next?.name == "Next")
        #expect(try database.sql("SELECT string_agg(name, ',' ORDER BY name) FROM project") == "Next,Other")
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["Next", "Other"] })
    }

    /// The lock timeout is how long an action waits for another writer, on PostgreSQL as on SQLite, even when it
    /// is longer than the statement timeout (`--lock-timeout 60`, the statement timeout 30 s): within it the action
    /// waits and lands; past it, it is refused as `databaseLocked` (503), not as a server that does not answer
    /// (500, "is the server up and reachable?").
    @Test func anActionWaitsForAnotherWriterAsLongAsTheLockTimeoutSays() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await TimeTracker.open(
            postgres: database.url, lockTimeout: .seconds(10), statementTimeout: .seconds(2)
        )
        // Another writer holds the write lock until the test lets it go: a holder that slept a fixed time was once
        // gone before a busy machine's psql could see it hold the lock.
        try database.sql("CREATE TABLE let_go (holder text)")
        let advisoryLocks = { (granted: Bool) in
            """
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted = \(granted)
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """
        }
        let holding = { (holder: String) in
            Task.detached {
                try database.sql("""
                    SELECT pg_advisory_xact_lock(1953066341);
                    DO $$ BEGIN
                        WHILE NOT EXISTS (SELECT 1 FROM let_go WHERE holder = '\(holder)') LOOP
                            PERFORM pg_sleep(0.02);
                        END LOOP;
                    END $$;
                    """)
            }
        }
        let first = holding("first")
        #expect(await eventually { (try? database.sql(advisoryLocks(true))) == "1" })
        let waiting = Task { try await tracker.perform(.addProject(name: "Waited")) }
        // The action waits for the lock: let the holder go, well within the lock timeout.
        #expect(await eventually { (try? database.sql(advisoryLocks(false))) == "1" })
        _ = try database.sql("INSERT INTO let_go VALUES ('first')")
        _ = try await first.value
        _ = try await waiting.value

        let second = holding("second")
        #expect(await eventually { (try? database.sql(advisoryLocks(true))) == "1" })
        await #expect(throws: TrackerError.databaseLocked(waited: .seconds(10))) {
            try await tracker.perform(.addProject(name: "Refused"))
        }
        _ = try database.sql("INSERT INTO let_go VALUES ('second')")
        _ = try await second.value
        #expect(try database.sql("SELECT string_agg(name, ',') FROM project") == "Waited")
    }

    /// The same actions, on SQLite and on PostgreSQL, give the same answers and the same states, step by step:
    /// names that are one under Unicode's case folding, bad names, unknown ids, starts, stops, deletes, restores,
    /// the trash emptied after an hour, a clock set back.
    @Test func theSameActionsGiveTheSameAnswersOnBothBackends() async throws {
        let postgres = try TemporaryPostgresDatabase()
        let sqlite = TemporaryDatabase()
        let postgresClock = TestClock(), sqliteClock = TestClock()
        let onPostgres = try await postgres.tracker(clock: postgresClock)
        let onSQLite = try await sqlite.tracker(clock: sqliteClock)
        let names = [
            "Writing", "WRITING", " writing ", "straße", "STRASSE", "ΟΔΟΣ", "οδος", "ﬁle", "FILE", "été", "E\u{301}TE\u{301}",
            "'; DROP TABLE project; --", "Robert'); DELETE FROM activity;--", "$1", "?", "\\", "%", "_", "😀\u{200D}😀",
            "😀😀", "a\u{0}b", "\u{200B}", "", "x" + String(repeating: "é", count: 199), String(repeating: "€", count: 134),
        ]
        var random = SeededRandom(seed: 15)
        for step in 0..<400 {
            let id = Int64(random.next(upTo: 12)) + 1
            let action: TrackerAction = switch random.next(upTo: 10) {
            case 0, 1: .addProject(name: names[random.next(upTo: names.count)])
            case 2, 3: .startActivity(projectID: id)
            case 4, 5: .stopActivity(projectID: id)
            case 6: .deleteProject(id: id)
            case 7: .restoreProject(id: id)
            default: .addProject(name: "Project \(random.next(upTo: 8))")
            }
            let seconds = [0.5, 7, 60, 1_800, -120][random.next(upTo: 5)]
            postgresClock.advance(by: seconds)
            sqliteClock.advance(by: seconds)
            let expected = await Self.outcome(of: action, on: onSQLite)
            let got = await Self.outcome(of: action, on: onPostgres)
            #expect(got == expected, "step \(step): \(action)")
            #expect(onPostgres.store.state == onSQLite.store.state, "step \(step): \(action)")
            if got != expected || onPostgres.store.state != onSQLite.store.state { return }
        }
        #expect(try postgres.count("activity") == (try sqlite.count("activity")))
        #expect(try postgres.count("deletedProject") == (try sqlite.count("deletedProject")))
    }

    /// A database whose encoding cannot hold every name a user may give (LATIN1 holds no emoji, no Greek) would
    /// refuse, with a server error, names SQLite takes: it is refused when opened, with what to do.
    @Test func aDatabaseThatCannotHoldEveryNameIsRefusedWhenOpened() async throws {
        let database = try TemporaryPostgresDatabase()
        let latin1 = database.name + "_latin1"
        try database.sql("CREATE DATABASE \(latin1) ENCODING 'LATIN1' TEMPLATE template0")
        defer { _ = try? database.sql("DROP DATABASE \(latin1) WITH (FORCE)") }
        let url = database.url(ofDatabase: latin1)
        await #expect {
            let tracker = try await TimeTracker.open(postgres: url)
            // Accepted: then it must hold what SQLite holds.
            try await tracker.perform(.addProject(name: "😀 Ωμέγα"))
        } throws: { error in
            guard case .unusableDatabase(_, let problem, let fix) = error as? TrackerError else { return false }
            return problem.contains("LATIN1") && fix.contains("UTF8")
        }
        #expect(try database.sql("SELECT count(*) FROM pg_tables WHERE tablename = 'project'", inDatabase: latin1) == "0")
    }

    /// Rows another program inserted with ids of their own (projects and activities moved over from a SQLite
    /// database, say) take ids the tracker's own inserts would be given next. On SQLite the next id is past every
    /// id in the table; the same actions must work on PostgreSQL, not be refused as a duplicate name no project has.
    @Test func idsTakenByAnotherProgramAreSkippedAsOnSQLite() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await database.tracker()
        try database.sql("""
            INSERT INTO project (id, name, nameKey, created) VALUES (1, 'Imported', 'imported', 0), (2, 'Old', 'old', 0);
            INSERT INTO activity (id, projectId, startedAt, stoppedAt) VALUES (1, 1, 0, 60), (2, 1, 100, 160);
            """)
        let added = try await tracker.perform(.addProject(name: "Writing"))
        #expect(added?.name == "Writing")
        let id = try #require(added?.id)
        try await tracker.perform(.startActivity(projectID: id))
        try await tracker.perform(.startActivity(projectID: 2))
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["Imported", "Old", "Writing"] })
    }

    /// A database (or its server, or the user) may suggest a client encoding other than UTF8: timetrack must still
    /// write names as they are (not as Latin-1 read from their UTF-8 bytes, which every other program would see
    /// garbled), and read what others wrote (a name that has no Latin-1 form made every snapshot fail).
    @Test func namesAreReadAndWrittenAsUTF8WhateverClientEncodingTheDatabaseSuggests() async throws {
        let database = try TemporaryPostgresDatabase()
        try database.sql("ALTER DATABASE \(database.name) SET client_encoding = 'LATIN1'")
        let tracker = try await database.tracker()
        try await tracker.perform(.addProject(name: "été"))
        #expect(try database.sql("SELECT name = U&'\\00E9t\\00E9' FROM project") == "t")
        try database.sql("INSERT INTO project (name, nameKey, created) VALUES (U&'\\03A9mega', U&'\\03C9mega', 0)")
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["été", "Ωmega"] })
    }

    /// A tracker that is released closes every connection it opened: a server that opens a tracker per request, or
    /// a test suite, would otherwise exhaust the server's connections.
    @Test func aReleasedTrackerClosesItsConnections() async throws {
        let database = try TemporaryPostgresDatabase()
        let connections = """
            SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            """
        var tracker: TimeTracker? = try await database.tracker()
        try await tracker?.perform(.addProject(name: "Writing"))
        #expect(try Int(database.sql(connections)) ?? 0 >= 1)
        tracker = nil
        #expect(await eventually { (try? database.sql(connections)) == "0" })
    }

    /// Every connection of the tracker is terminated, and once the server has ended them all, an action runs: the
    /// pool may lease one of the dead connections before it learns of the close, and postgres-nio never answers a
    /// statement written to a closed connection. The action must not wait for the statement timeout and fail: it
    /// runs on another connection.
    @Test func anActionRightAfterEveryConnectionWasTerminatedSucceeds() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await TimeTracker.open(postgres: database.url, statementTimeout: .seconds(5))
        for round in 0..<20 {
            let ended = try database.sql("""
                WITH killed AS (
                    SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                )
                SELECT coalesce(string_agg(pid::text, ','), '0') FROM killed
                """)
            // Those backends are gone (the listener may have connected again meanwhile: it is not waited for).
            #expect(await eventually { (try? database.sql("SELECT count(*) FROM pg_stat_activity WHERE pid IN (\(ended))")) == "0" })
            let outcome = await Self.outcome(of: .addProject(name: "p\(round)"), on: tracker)
            #expect((try? outcome.get()) != nil, "round \(round): \(outcome)")
        }
    }

    /// The network fails just after the server committed an action, before its answer arrives: the action landed,
    /// so it is reported done. And the tracker's listener, whose connection went down too, catches up with what was
    /// written meanwhile.
    @Test func aCommitWhoseAnswerIsLostIsLookedUpAndReportedDone() async throws {
        let database = try TemporaryPostgresDatabase()
        let proxy = try PostgresProxy(to: database.port)
        defer { proxy.close() }
        let url = database.url(through: proxy)
        let tracker = try await TimeTracker.open(postgres: url)
        proxy.loseTheNextCommitAnswer()
        let outcome = await Self.outcome(of: .addProject(name: "Landed"), on: tracker)
        #expect(proxy.lostCommitAnswers == 1)
        #expect(try database.sql("SELECT name FROM project") == "Landed")
        #expect((try? outcome.get())??.name == "Landed", "\(outcome)")
        try database.sql("INSERT INTO project (name, nameKey, created) VALUES ('While away', 'while away', 0)")
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["Landed", "While away"] })
    }

    /// The same, while the server stays unreachable for longer than one statement may take: the lookup must keep
    /// asking until it knows, or say that it could not tell. An action that landed is never reported as a plain
    /// failure (its user would do it again).
    @Test func aCommitWhoseAnswerIsLostWhileTheServerIsUnreachableIsNeverReportedFailed() async throws {
        let database = try TemporaryPostgresDatabase()
        let proxy = try PostgresProxy(to: database.port)
        defer { proxy.close() }
        let url = database.url(through: proxy)
        let tracker = try await TimeTracker.open(postgres: url, statementTimeout: .seconds(2))
        proxy.loseTheNextCommitAnswer(thenRefuseConnectionsFor: .seconds(3))
        let outcome = await Self.outcome(of: .addProject(name: "Landed"), on: tracker)
        #expect(proxy.lostCommitAnswers == 1)
        #expect(try database.sql("SELECT name FROM project") == "Landed")
        switch outcome {
        case .success(let project):
            #expect(project?.name == "Landed")
        case .failure(let error):
            #expect(error.description.contains("could not tell whether"), "reported failed: \(error)")
        }
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["Landed"] })
    }

    /// A `COMMIT`'s answer is lost while many actions wait their turn (more than the pool's 20 connections, each
    /// waiting action holding one): the lookup must still get to ask, and report the action done.
    @Test func aCommitAnswerLostWhileManyActionsWaitTheirTurnIsStillLookedUp() async throws {
        let database = try TemporaryPostgresDatabase()
        let proxy = try PostgresProxy(to: database.port)
        defer { proxy.close() }
        let tracker = try await TimeTracker.open(postgres: database.url(through: proxy), statementTimeout: .seconds(3))
        // Another writer holds the write lock a while, so that the actions pile up behind the first.
        let holder = Task.detached { try database.sql("SELECT pg_advisory_xact_lock(1953066341), pg_sleep(2)") }
        #expect(await eventually {
            (try? database.sql("""
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """)) == "1"
        })
        proxy.loseTheNextCommitAnswer(alone: true)
        let outcomes = await withTaskGroup(of: ActionReply.Outcome.self) { group in
            for number in 0..<30 {
                group.addTask { await Self.outcome(of: .addProject(name: "Project \(number)"), on: tracker) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        _ = try await holder.value
        #expect(proxy.lostCommitAnswers == 1)
        #expect(try database.count("project") == 30)
        for case .failure(let error) in outcomes {
            Issue.record("an action that landed was reported failed: \(error)")
        }
    }

    /// Three trackers (three servers) adding projects while the server is restarted and their connections are
    /// terminated: every action reported done is in the database, none reported failed is (unless the tracker said
    /// it could not tell), and every tracker, and one that only watches, ends showing the database.
    @Test func restartsAndTerminatedConnectionsDuringWritesLoseNothingAndReportTheTruth() async throws {
        let server = try PrivatePostgresServer()
        var trackers: [TimeTracker] = []
        for _ in 0..<3 {
            trackers.append(try await TimeTracker.open(postgres: server.url, statementTimeout: .seconds(10)))
        }
        let viewer = try await TimeTracker.open(postgres: server.url)
        let writers = trackers
        let writing = Task {
            await withTaskGroup(of: [(String, ActionReply.Outcome)].self) { group in
                for (index, tracker) in writers.enumerated() {
                    group.addTask {
                        var outcomes: [(String, ActionReply.Outcome)] = []
                        for number in 0..<60 {
                            let name = "t\(index)-\(number)"
                            outcomes.append((name, await Self.outcome(of: .addProject(name: name), on: tracker)))
                        }
                        return outcomes
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
        }
        for round in 0..<4 {
            try await Task.sleep(for: .milliseconds(300))
            if round.isMultiple(of: 2) {
                try server.restart()
            } else {
                try server.sql("""
                    SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                    """)
            }
        }
        let outcomes = await writing.value
        let stored = Set(try server.sql("SELECT name FROM project").split(separator: "\n").map(String.init))
        for (name, outcome) in outcomes {
            switch outcome {
            case .success:
                #expect(stored.contains(name), "\(name) was reported done, and is not in the database")
            case .failure(let error):
                if !error.description.contains("could not tell whether") {
                    #expect(!stored.contains(name), "\(name) was reported failed (\(error)), and is in the database")
                }
            }
        }
        #expect(outcomes.contains { (try? $0.1.get()) != nil })
        for tracker in trackers + [viewer] {
            #expect(await eventually { Set(tracker.store.state.projects.map(\.name)) == stored })
        }
    }

    /// The tracker's connections die silently (a NAT or a firewall between it and the server forgets them: no
    /// reset, no close), while new connections work: the listener must notice, listen again and catch up, or the
    /// pages of that server never update again.
    @Test func aListenerWhoseConnectionSilentlyDiesComesBackAndCatchesUp() async throws {
        let database = try TemporaryPostgresDatabase()
        let proxy = try PostgresProxy(to: database.port)
        defer { proxy.close() }
        // Its idle pooled connections die too, and a read that gets one is given up at the statement timeout: a
        // short one, so that the deadline below measures the listener's coming back, not that timeout.
        let tracker = try await TimeTracker.open(postgres: database.url(through: proxy), statementTimeout: .seconds(5))
        // The listener listens (through the proxy) before its connection dies: the change below reaches it only if
        // it notices and listens again.
        #expect(await eventually {
            (try? database.sql("""
                SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'
                """)) == "1"
        })
        proxy.blackHoleOpenConnections()
        try database.sql("INSERT INTO project (name, nameKey, created) VALUES ('While away', 'while away', 0)")
        #expect(await eventually(timeout: .seconds(120)) { tracker.store.state.projects.map(\.name) == ["While away"] })
    }

    private static func outcome(of action: TrackerAction, on tracker: TimeTracker) async -> ActionReply.Outcome {
        do throws(TrackerError) {
            return .success(try await tracker.perform(action))
        } catch {
            return .failure(error)
        }
    }
}

/// `--database` URLs whose password holds a character that ends the part of the URL it is in (`/`, `?`, `#`) unless
/// written `%2F`, `%3F`, `%23`: the rest of the password is then read as a port, a database name or an option, and
/// must not be repeated in the refusal.
@Suite("Attacks on the --database URL")
struct AttackPostgresURLTests {
    @Test(arguments: [
        "postgres://tracker:2024/Hunter2secret@db.example/timetrack",
        "postgres://tracker:2024/Hunter2secret@db.example",
        "postgres://tracker:443?Hunter2secret@db.example/timetrack",
        "postgres://tracker:8#Hunter2secret@db.example/timetrack",
    ])
    func aPasswordInTheWrongPlaceIsNeverRepeated(url: String) async throws {
        await #expect {
            _ = try await TimeTracker.open(postgres: url)
        } throws: { error in
            let message = "\(error)"
            return !message.contains("Hunter2") && !message.contains("secret")
        }
    }
}

/// A small, repeatable random sequence (SplitMix64), so that a failing sequence fails again.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next(upTo bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((value ^ (value >> 31)) % UInt64(bound))
    }
}
