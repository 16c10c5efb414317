import Foundation
import Testing
import TimeTrackerTestSupport

/// The real clock of the process moved with Debian's `faketime` (libfaketime), as an NTP step or a laptop resuming
/// would move it: the tracker must never count the same time twice.
@Suite("timetrack with the clock going backwards", .serialized)
struct ClockTests {
    /// An hour's activity, then one started after the clock went back an hour and stopped 70 minutes later: the list
    /// shows 1:10:00, the time that passed, not 2:10:00 (the second activity starts where the first ended).
    @Test(.enabled(if: FakedClock.isAvailable, "needs Debian's faketime"))
    func anActivityStartedAfterTheClockWentBackDoesNotOverlapTheLastOne() throws {
        let database = TemporaryDatabase()
        let db = ["--db", database.path]
        #expect(try TimetrackProcess.run(["add", "Writing"] + db).status == 0)
        #expect(try FakedClock.run(at: "+0", ["start", "Writing"] + db) == 0)
        #expect(try FakedClock.run(at: "+1h", ["stop", "Writing"] + db) == 0)
        #expect(try FakedClock.run(at: "+0", ["start", "Writing"] + db) == 0)  // an hour "before" the last stop
        #expect(try FakedClock.run(at: "+70m", ["stop", "Writing"] + db) == 0)
        let listed = try TimetrackProcess.run(["list"] + db).output
        #expect(listed.contains("1:10:0"), "\(listed)")  // 1:10:00, give or take the seconds the commands took
    }
}
