import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

@Suite("Project names")
struct ProjectNameTests {
    @Test func namesAreTrimmedAndComposed() throws {
        #expect(try ProjectName("  Writing \n").display == "Writing")
        #expect(try ProjectName("e\u{301}te\u{301}").display == "été")
    }

    @Test(arguments: ["", "   ", "\n\t "])
    func anEmptyNameIsRefused(_ name: String) {
        #expect(throws: TrackerError.emptyName) { try ProjectName(name) }
    }

    @Test func overlongNamesAndControlCharactersAreRefused() throws {
        #expect(throws: TrackerError.nameTooLong) { try ProjectName(String(repeating: "x", count: 201)) }
        #expect(try ProjectName(String(repeating: "é", count: 200)).display.count == 200)
        #expect(throws: TrackerError.nameHasControlCharacters) { try ProjectName("a\nb") }
        #expect(throws: TrackerError.nameHasControlCharacters) { try ProjectName("a\u{0}b") }
    }

    @Test func theKeyIgnoresCaseAndNormalization() throws {
        #expect(try ProjectName("WRITING").key == (try ProjectName("writing").key))
        #expect(try ProjectName("ÉTÉ").key == (try ProjectName("e\u{301}te\u{301}").key))
    }

    // Issue 11: one letter with 7,999 combining marks (16,000 bytes) was one "character", and accepted.
    @Test func aNameIsBoundedInBytesToo() throws {
        let heavy = "a" + String(repeating: "\u{301}", count: 7_999)
        #expect(heavy.count == 1)
        #expect(throws: TrackerError.nameTooLong) { try ProjectName(heavy) }
        #expect(throws: TrackerError.nameTooLong) { try ProjectName(String(repeating: "€", count: 134)) }  // 402 bytes
        #expect(try ProjectName(String(repeating: "€", count: 133)).display.utf8.count == 399)
        #expect(TrackerError.nameTooLong.description.contains("400 bytes"))
    }

    // Issue 11: uniqueness used lowercased(), so these pairs were two projects.
    @Test(arguments: [("ΟΔΟΣ", "οδος"), ("straße", "STRASSE"), ("ﬁle", "FILE"), ("Ǆemal", "ǆemal")])
    func theKeyFoldsCaseAsUnicodeDoes(one: String, other: String) throws {
        #expect(try ProjectName(one).key == (try ProjectName(other).key))
        #expect(try ProjectName(one).display == one)
    }

    // Issue 11: names that are invisible, or look like another, were accepted.
    @Test(arguments: [
        "Wri\u{200B}ting", "\u{FEFF}Writing", "\u{200C}", "Writing\u{2060}", "\u{202E}gnitirW", "Wri\u{200D}ting",
        "abc\u{2066}d", "x\u{115F}",
    ])
    func invisibleAndDirectionCharactersAreRefused(name: String) {
        #expect {
            try ProjectName(name)
        } throws: { error in
            guard case .nameHasInvisibleCharacters = error as? TrackerError else { return false }
            return (error as? TrackerError)?.description.contains("U+") == true
        }
    }

    @Test(arguments: ["\u{301}", "\u{301}Writing", "\u{20DD}"])
    func aNameCannotBeginWithACombiningMark(name: String) {
        #expect(throws: TrackerError.nameStartsWithCombiningMark) { try ProjectName(name) }
    }

    @Test(arguments: [
        "👩\u{200D}👩\u{200D}👧 family", "❤\u{FE0F} hearts", "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F} Scotland",
        "1\u{FE0F}\u{20E3} first", "#️⃣ tag", "👍🏽", "🧑🏽‍💻 code", "🇫🇷", "❤️‍🔥", "🏳️‍🌈", "🏳️‍⚧️", "👁️‍🗨️", "🏃🏽‍♀️‍➡️",
        "🫱🏻‍🫲🏿", "🏴‍☠️", "🐻‍❄️", "🐦‍🔥", "🤷🏾‍♀️",
    ])
    func emojiSequencesKeepTheirJoinersAndSelectors(name: String) throws {
        #expect(try ProjectName(name).display == name.precomposedStringWithCanonicalMapping)
    }
}

@Suite("Actions and rules", .serialized)
struct ActionTests {
    @Test(arguments: TestBackend.allCases)
    func addingTrimsAndRefusesDuplicatesIgnoringCase(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        let added = try #require(try await tracker.perform(.addProject(name: "  Writing  ")))
        #expect(added.name == "Writing")
        await #expect(throws: TrackerError.duplicateName(existing: "Writing")) {
            try await tracker.perform(.addProject(name: "WRITING"))
        }
        await #expect(throws: TrackerError.emptyName) { try await tracker.perform(.addProject(name: " ")) }
        _ = try await tracker.perform(.addProject(name: "été"))
        await #expect(throws: TrackerError.duplicateName(existing: "été")) {
            try await tracker.perform(.addProject(name: "E\u{301}TE\u{301}"))
        }
        #expect(tracker.store.state.projects.map(\.name) == ["été", "Writing"].sorted { $0.lowercased() < $1.lowercased() })
        #expect(try database.count("project") == 2)
    }

    @Test(arguments: TestBackend.allCases)
    func elapsedTimeCountsFinishedActivitiesAndARunningOneShowsItsStart(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        for seconds in [10.0, 20.0] {
            try await tracker.perform(.startActivity(projectID: id))
            clock.advance(by: seconds)
            try await tracker.perform(.stopActivity(projectID: id))
        }
        clock.advance(by: 100)
        let running = try #require(try await tracker.perform(.startActivity(projectID: id)))
        #expect(running.elapsedSeconds == 30)
        #expect(running.runningSince == clock.now)
        #expect(running.elapsed(at: clock.now.addingTimeInterval(5)) == 35)
        #expect(tracker.store.state.project(id: id) == running)
    }

    @Test(arguments: TestBackend.allCases)
    func startingARunningProjectOrStoppingAStoppedOneIsAnErrorThatChangesNothing(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        await #expect(throws: TrackerError.notRunning(project: "Writing")) {
            try await tracker.perform(.stopActivity(projectID: id))
        }
        try await tracker.perform(.startActivity(projectID: id))
        let before = tracker.store.state
        await #expect(throws: TrackerError.alreadyRunning(project: "Writing")) {
            try await tracker.perform(.startActivity(projectID: id))
        }
        #expect(try database.count("activity") == 1)
        #expect(tracker.store.state == before)
    }

    @Test(arguments: TestBackend.allCases)
    func unknownProjectsAreErrors(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        for action in [TrackerAction.deleteProject(id: 7), .startActivity(projectID: 7), .stopActivity(projectID: 7)] {
            await #expect(throws: TrackerError.projectNotFound("with id 7")) { try await tracker.perform(action) }
        }
        #expect(throws: TrackerError.projectNotFound("named \"nope\"")) { try tracker.project(named: " nope ") }
    }

    @Test(arguments: TestBackend.allCases)
    func deletingAProjectDeletesItsActivitiesToo(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        let other = try #require(try await tracker.perform(.addProject(name: "Reading"))).id
        try await tracker.perform(.startActivity(projectID: id))
        try await tracker.perform(.stopActivity(projectID: id))
        try await tracker.perform(.startActivity(projectID: id))
        try await tracker.perform(.startActivity(projectID: other))
        #expect(try await tracker.perform(.deleteProject(id: id)) == nil)
        #expect(try database.count("activity") == 1)
        #expect(tracker.store.state.projects.map(\.id) == [other])
    }

    @Test(arguments: TestBackend.allCases)
    func aClockSetBackNeverMakesANegativeDuration(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.startActivity(projectID: id))
        clock.advance(by: -3600)
        #expect(try await tracker.perform(.stopActivity(projectID: id))?.elapsedSeconds == 0)
    }

    // Issue 11: an hour's activity, the clock stepped back an hour, then ten minutes more: the second activity lay
    // inside the first, and both were counted (1:10:00 for 1:00:00 of wall time at most).
    @Test(arguments: TestBackend.allCases)
    func aClockSetBackNeverMakesActivitiesOverlap(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.startActivity(projectID: id))
        clock.advance(by: 3600)
        try await tracker.perform(.stopActivity(projectID: id))
        clock.advance(by: -3600)  // an NTP step, a laptop resuming with a wrong clock
        let restarted = try #require(try await tracker.perform(.startActivity(projectID: id)))
        // It starts where the last one ended, not inside it.
        #expect(restarted.runningSince == clock.now.addingTimeInterval(3600))
        #expect(restarted.elapsed(at: clock.now) == 3600)
        clock.advance(by: 600)
        #expect(try await tracker.perform(.stopActivity(projectID: id))?.elapsedSeconds == 3600)
    }

    @Test(arguments: TestBackend.allCases)
    func theProjectANameMeansIgnoresCase(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        try await tracker.perform(.addProject(name: "Writing"))
        #expect(try tracker.project(named: " writING ").name == "Writing")
    }

    // Issue 11: Delete on the page removed a project and all its activities at once, with no way back.
    @Test(arguments: TestBackend.allCases)
    func aDeleteCanBeUndoneExactlyOnce(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.startActivity(projectID: id))
        clock.advance(by: 600)
        try await tracker.perform(.stopActivity(projectID: id))
        clock.advance(by: 60)
        let before = try #require(try await tracker.perform(.startActivity(projectID: id)))
        clock.advance(by: 30)
        try await tracker.perform(.deleteProject(id: id))
        #expect(try database.count("activity") == 0)
        let restored = try #require(try await tracker.perform(.restoreProject(id: id)))
        #expect(restored == before)  // same id, name, creation, finished time and running start
        #expect(try database.count("activity") == 2)
        await #expect(throws: TrackerError.projectNotFound("deleted with id \(id) (a deleted project can be restored for an hour)")) {
            try await tracker.perform(.restoreProject(id: id))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aRestoreThatWouldDuplicateANameIsRefusedAndTheTrashKeepsOnlyAnHour(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let first = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.deleteProject(id: first))
        try await tracker.perform(.addProject(name: "WRITING"))
        await #expect(throws: TrackerError.duplicateName(existing: "WRITING")) {
            try await tracker.perform(.restoreProject(id: first))
        }
        let second = try #require(try await tracker.perform(.addProject(name: "Reading"))).id
        clock.advance(by: 3_601)
        try await tracker.perform(.deleteProject(id: second))  // empties the trash of what is older than an hour
        await #expect(throws: TrackerError.self) { try await tracker.perform(.restoreProject(id: first)) }
        #expect(try await tracker.perform(.restoreProject(id: second))?.name == "Reading")
    }
}
