#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// An action whose `COMMIT` answer comes too late, or is lost with its connection, may have landed: it is looked up and
/// reported as it went, never as a plain failure when it landed (its user would do it again), and never done when it
/// did not.
@Suite(
    "The outcome of a commit whose answer is lost", .serialized,
    .enabled(if: TemporaryPostgresDatabase.isInstalled, "PostgreSQL is not installed: apt-get install postgresql (scripts/prerequisites does it)")
)
struct PostgresCommitOutcomeTests {
    /// A `COMMIT` that outlasts the statement timeout (a deferred trigger sleeps in it) still lands: the action is
    /// looked up and reported done, not failed (its user would do it again: a second project, a second start).
    ///
    /// A statement of a write's transaction gets the statement timeout and what is left of the lock timeout: here
    /// 5 s and at most 1 s, which the 8 s commit outlasts; the lookup then asks for twice the statement timeout, which
    /// leaves a busy machine seconds to spare.
    @Test func aCommitWhoseAnswerCameTooLateIsLookedUpNotReportedFailed() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await TimeTracker.open(
            postgres: database.url, lockTimeout: .seconds(1), statementTimeout: .seconds(5)
        )
        try database.sql("""
            CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_sleep(8); RETURN NULL; END $$;
            CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON project
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();
            """)
        try await tracker.perform(.addProject(name: "Slow"))
        #expect(try database.count("project") == 1)
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["Slow"] })
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
        let outcome = await outcome(of: .addProject(name: "Landed"), on: tracker)
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
        let outcome = await outcome(of: .addProject(name: "Landed"), on: tracker)
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
        // A lock timeout no wait in this line comes near, so that every action lands however busy the machine: the
        // window is the lookup of the one whose answer is lost, not the line.
        let tracker = try await TimeTracker.open(
            postgres: database.url(through: proxy), lockTimeout: .seconds(120), statementTimeout: .seconds(10)
        )
        // Another writer holds the write lock until the actions have piled up behind the first.
        let holder = try PostgresWriteLockHolder(on: database)
        #expect(await holder.waitUntilHeld())
        proxy.loseTheNextCommitAnswer(alone: true)
        let performing = Task {
            await withTaskGroup(of: ActionReply.Outcome.self) { group in
                for number in 0..<30 {
                    group.addTask { await outcome(of: .addProject(name: "Project \(number)"), on: tracker) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        // Every pooled connection leased by a waiting action, and the listener's: the line is full.
        let trackerConnections = """
            SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
            AND application_name NOT LIKE 'write_lock_holder%'
            """
        _ = await eventually(every: psqlPolling) { (Int((try? database.sql(trackerConnections)) ?? "") ?? 0) >= 21 }
        try await holder.release()
        let outcomes = await performing.value
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
                            outcomes.append((name, await outcome(of: .addProject(name: name), on: tracker)))
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
}
#endif
