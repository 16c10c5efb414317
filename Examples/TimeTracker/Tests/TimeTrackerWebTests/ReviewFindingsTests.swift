import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport
@testable import TimeTrackerWeb

/// What a review of issue 11's fixes still got through, as an attacker or a clumsy user: each test failed before its
/// fix. The comments describe each defect as it was found.
@Suite("Attack: what the review of issue 11 got through")
struct ReviewFindingsTests {
    private static let token = "abcdefghijklmnop0123"
    private static let jsonHeaders: HTTPFields = [.contentType: "application/json"]

    // RequestGuard checks `path.hasPrefix("/api/")`, but the router ignores empty segments: `//api/projects` is the
    // API, without the token.
    @Test(arguments: ["//api/projects", "//api/events"])
    func anEmptyFirstSegmentDoesNotSkipTheToken(path: String) async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let requestGuard = RequestGuard(listeningHost: "0.0.0.0", accessToken: Self.token)
        let application = Application(router: WebApplication.router(tracker: tracker, requestGuard: requestGuard))
        try await application.test(.router) { client in
            let response = try await client.execute(uri: path, method: path.hasSuffix("events") ? .head : .get)
            #expect(response.status == .unauthorized, "\(path) answered \(response.status) without the token")
        }
    }

    @Test func anEmptyFirstSegmentDoesNotLetAChangeThroughWithoutTheToken() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let requestGuard = RequestGuard(listeningHost: "0.0.0.0", accessToken: Self.token)
        let application = Application(router: WebApplication.router(tracker: tracker, requestGuard: requestGuard))
        try await application.test(.router) { client in
            let response = try await client.execute(
                uri: "//api/projects", method: .post, headers: Self.jsonHeaders, body: ByteBuffer(string: #"{"name":"x"}"#)
            )
            #expect(response.status == .unauthorized)
        }
        #expect(tracker.store.state.projects.isEmpty)
    }

    // README: `--allow-host NAME` is "another name the server is reached by (a proxy's…)". Behind a TLS proxy the
    // page's Origin is https://NAME, which the guard compares with "http://" + Host: every change is 403.
    @Test func thePageBehindAnHTTPSProxyItWasAllowedCanMakeChanges() {
        let requestGuard = RequestGuard(listeningHost: "127.0.0.1", extraHosts: ["tracker.example.com"])
        let refusal = requestGuard.refusal(for: .init(
            method: .post, authority: "tracker.example.com", origin: "https://tracker.example.com",
            contentType: "application/json"
        ))
        #expect(refusal == nil, "\(refusal?.message ?? "")")
    }

    // Default-ignorable code points are allowed in any "emoji" character: digits, `#` and `*` are emoji, variation
    // selectors may be stacked, and any tag characters may follow a black flag. Each makes a second project that
    // looks exactly like the first.
    @Test(arguments: [
        ("Invoice 1\u{FE0F}", "Invoice 1"),
        ("Sprint #\u{FE0E}", "Sprint #"),
        ("\u{1F600}\u{FE0F}\u{FE0F}\u{FE0F}", "\u{1F600}"),  // a selector after 😀 changes nothing: refused now
        ("\u{1F3F4}\u{E0041}\u{E0042}\u{E0043}", "\u{1F3F4}"),
    ])
    func anInvisibleCodePointInAnEmojiCharacterDoesNotMakeALookAlike(spoof: String, original: String) throws {
        let originalKey = try ProjectName(original).key
        let accepted = try? ProjectName(spoof)
        #expect(
            accepted == nil || accepted?.key == originalKey,
            "\(spoof.unicodeScalars.map { String($0.value, radix: 16) }) is a distinct name that looks like \(original)"
        )
    }

    // README: "Deleted projects and their activities are kept for an hour"; restore answers "404 not deleted within
    // the hour". The trash is emptied only by the next delete, so with none, a project deleted days ago comes back.
    @Test func aProjectDeletedMoreThanAnHourAgoCannotBeRestored() async throws {
        let database = TemporaryDatabase()
        let clock = TestClock()
        let tracker = try clock.tracker(at: database.path)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.deleteProject(id: id))
        clock.advance(by: 2 * 86_400)
        await #expect(throws: TrackerError.self) { try await tracker.perform(.restoreProject(id: id)) }
    }

    // `--lock-timeout 0` passes validation ("0 or more"), but every change is then refused as "locked by another
    // program", with no other program anywhere.
    @Test func aLockTimeoutOfZeroStillWritesToADatabaseNobodyHolds() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path, lockTimeout: .zero)
        await #expect(throws: Never.self) { try await tracker.perform(.addProject(name: "Writing")) }
    }

    // Only the main file's identity is checked: with its -wal removed (a clumsy clean-up), every write is confirmed
    // into the unlinked journal, and is gone once the tracker closes.
    @Test func aWriteIsNotConfirmedAfterTheJournalWasRemoved() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        try await tracker.perform(.addProject(name: "Before"))
        try FileManager.default.removeItem(atPath: database.path + "-wal")
        await #expect(throws: TrackerError.self) { try await tracker.perform(.addProject(name: "After")) }
    }
}
