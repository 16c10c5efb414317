import Testing
import TimeTrackerTestSupport

/// A fresh database on `backend`; a backend that cannot be tested here cancels the test case with the reason (the
/// command that installs PostgreSQL), so that it is reported, never passed silently.
func testDatabase(on backend: TestBackend) throws -> any TestDatabase {
    if let reason = backend.unavailableReason { try Test.cancel(Comment(rawValue: reason)) }
    return try backend.makeDatabase()
}
