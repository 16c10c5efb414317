import Statehouse

/// Failures found on threads, recorded by the check's task once they are done: Swift Testing attributes an issue to
/// a test only when it is recorded from the test's task.
final class FailureLog: Sendable {
    private let messages = Locked<[String]>([])

    func append(_ message: String) {
        messages.withLock { $0.append(message) }
    }

    /// Records the failures as issues, the first few in full, so that a storage failing on every call does not bury
    /// the report.
    func record(in subject: ConformanceSubject, first shown: Int = 5) {
        let all = messages.withLock { $0 }
        for message in all.prefix(shown) { subject.fail(message) }
        if all.count > shown { subject.fail("…and \(all.count - shown) more failures like these.") }
    }

    var isEmpty: Bool {
        messages.withLock { $0.isEmpty }
    }
}
