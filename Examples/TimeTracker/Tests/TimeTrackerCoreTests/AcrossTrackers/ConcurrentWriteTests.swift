import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// Trackers writing at once (several servers on one database) end as one writer at a time would: the rules hold across
/// them, and each refusal is one a lone writer could get.
@Suite("Trackers writing at once", .serialized)
struct ConcurrentWriteTests {
    /// Four trackers (four servers) adding one name at once ("Same" and "SAME") make one project: one wins, and every
    /// other gets the refusal a lone second try gets, or, on a machine too busy for its turn to come within the
    /// lock timeout, a lock timeout, which writes nothing either.
    @Test(arguments: TestBackend.allCases)
    func twoTrackersAddingTheSameNameAtOnceMakeOneProject(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        var trackers: [TimeTracker] = []
        for _ in 0..<4 { trackers.append(try await database.tracker()) }
        let results = await withTaskGroup(of: Result<ProjectSummary?, TrackerError>.self) { group in
            for (index, tracker) in trackers.enumerated() {
                let name = index.isMultiple(of: 2) ? "Same" : "SAME"
                group.addTask {
                    do throws(TrackerError) {
                        return .success(try await tracker.perform(.addProject(name: name)))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let winner = try #require(try results.first { (try? $0.get()) != nil }?.get())
        #expect(results.filter { (try? $0.get()) != nil }.count == 1)
        for case .failure(let error) in results {
            #expect(error == .duplicateName(existing: winner.name) || error == .databaseLocked(waited: .seconds(5)), "\(error)")
        }
        #expect(try database.count("project") == 1)
    }

    /// Forty starts of one project at once, from four trackers, start it once: every other start is refused as
    /// running already, or, when its turn did not come within the lock timeout (forty writes one after the other, on
    /// a busy machine), as a lock timeout, which writes nothing either. Those are the only refusals a start can get
    /// here (the project exists, and the database answers).
    @Test(arguments: TestBackend.allCases)
    func concurrentStartsOfOneProjectStartItOnce(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        var trackers: [TimeTracker] = []
        for _ in 0..<4 { trackers.append(try await database.tracker()) }
        let id = try #require(try await trackers[0].perform(.addProject(name: "Writing"))).id
        let failures = await withTaskGroup(of: TrackerError?.self) { group in
            for tracker in trackers {
                for _ in 0..<10 {
                    group.addTask {
                        do throws(TrackerError) {
                            try await tracker.perform(.startActivity(projectID: id))
                            return nil
                        } catch {
                            return error
                        }
                    }
                }
            }
            return await group.reduce(into: [TrackerError?]()) { $0.append($1) }
        }
        #expect(failures.filter { $0 == nil }.count == 1)
        let unexpected = failures.compactMap { $0 }.filter {
            $0 != .alreadyRunning(project: "Writing") && $0 != .databaseLocked(waited: .seconds(5))
        }
        #expect(unexpected.isEmpty, "refusals other than running already or a lock timeout: \(unexpected)")
        #expect(try database.count("activity") == 1)
    }
}
