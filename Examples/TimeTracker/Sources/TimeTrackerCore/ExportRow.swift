import Foundation

/// A line of an export: a project (its name and when it was added), or one of its activities (its start, and its
/// stop unless it runs). Names, not ids: an export goes into another database, where ids differ.
public struct ExportRow: Codable, Equatable, Sendable {
    /// Where the row was in the file it was read from (1 is the first line), for messages; 0 for a row not read.
    public var line: Int
    public var project: String
    /// Seconds since 1970; set on a project's row.
    public var created: Double?
    /// Seconds since 1970; set on an activity's row.
    public var startedAt: Double?
    /// Seconds since 1970; absent on a project's row and on a running activity's.
    public var stoppedAt: Double?

    public init(line: Int = 0, project: String, created: Double? = nil, startedAt: Double? = nil, stoppedAt: Double? = nil) {
        self.line = line
        self.project = project
        self.created = created
        self.startedAt = startedAt
        self.stoppedAt = stoppedAt
    }
}
