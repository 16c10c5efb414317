/// Why an action was refused. The message is meant for the user: the CLI prints it, the API returns it.
public enum TrackerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The name was empty once surrounding white space was trimmed.
    case emptyName
    /// The name is longer than ``ProjectName/maximumLength`` characters or ``ProjectName/maximumByteCount`` bytes.
    case nameTooLong
    /// The name contains a control character (a new line, a tab, …).
    case nameHasControlCharacters
    /// The name contains an invisible code point or a bidi control (this one), outside an emoji sequence.
    case nameHasInvisibleCharacters(Unicode.Scalar)
    /// The name begins with a combining mark, which has nothing to combine with.
    case nameStartsWithCombiningMark
    /// Another project has this name, ignoring case.
    case duplicateName(existing: String)
    /// No project has this name or id.
    case projectNotFound(String)
    /// The project already has a running activity.
    case alreadyRunning(project: String)
    /// The project has no running activity.
    case notRunning(project: String)
    /// No activity has this id.
    case activityNotFound(Int64)
    /// An activity's start or stop breaks a rule: which.
    case invalidActivityTimes(String)
    /// An activity would overlap another of the same project: that one's id.
    case overlappingActivity(project: String, other: Int64)
    /// An import was refused whole: the line of the row that broke a rule, and the rule.
    case importRefused(line: Int, reason: String)
    /// `undo` found no change to take back (none since the database was made, or the last ones were undone).
    case nothingToUndo
    /// `redo` found no undone change (a new change since an undo forgets what could be redone).
    case nothingToRedo
    /// The rows an undo or redo would change are no longer as the change left them: what changed.
    case changedSince(String)
    /// An action made in a copy of the tracker (`--remote`) names a row that another change removed or replaced
    /// before the action reached the server; nothing was changed.
    case changedElsewhere(String)
    /// Another program held the database locked longer than the tracker's lock timeout; nothing was written.
    case databaseLocked(waited: Duration)
    /// The database file was removed or replaced while the tracker had it open; nothing more is written to it.
    case databaseGone(path: String)
    /// The `--db` path cannot be timetrack's database: what is wrong, and what the user can do.
    case unusableDatabase(path: String, problem: String, fix: String)
    /// The database could not be opened, read or written.
    case database(String)
    /// Apps sync with a tracker on SQLite only (``TimeTracker/applySynced(_:)``).
    case syncNeedsSQLite

    public var description: String {
        switch self {
        case .emptyName:
            "A project needs a name."
        case .nameTooLong:
            """
            A project name has at most \(ProjectName.maximumLength) characters and \(ProjectName.maximumByteCount) \
            bytes in UTF-8 (accents and emoji take several).
            """
        case .nameHasControlCharacters:
            "A project name cannot contain control characters such as new lines or tabs."
        case .nameHasInvisibleCharacters(let scalar):
            """
            A project name cannot contain invisible or text-direction characters \
            (it holds U+\(String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4))), \
            which make one name look like another.
            """
        case .nameStartsWithCombiningMark:
            "A project name cannot begin with a combining mark (an accent with no letter under it)."
        case .duplicateName(let existing):
            "A project named \"\(existing)\" already exists (names are compared ignoring case)."
        case .projectNotFound(let project):
            "There is no project \(project)."
        case .alreadyRunning(let project):
            "\"\(project)\" is already running; stop it first."
        case .notRunning(let project):
            "\"\(project)\" is not running."
        case .activityNotFound(let id):
            "There is no activity with id \(id)."
        case .invalidActivityTimes(let rule):
            rule
        case .overlappingActivity(let project, let other):
            "That would overlap activity \(other) of \"\(project)\": a project's activities never overlap."
        case .importRefused(let line, let reason):
            "Nothing was imported: line \(line): \(reason)"
        case .nothingToUndo:
            "There is nothing to undo."
        case .nothingToRedo:
            "There is nothing to redo (a change made after an undo cannot be redone past)."
        case .changedSince(let what):
            "Cannot undo or redo that change: \(what). Nothing was changed."
        case .changedElsewhere(let what):
            "Not applied: \(what), changed elsewhere meanwhile. Nothing was changed."
        case .databaseLocked(let waited):
            """
            The database is locked by another program; timetrack waited \(waited.inSeconds) s and wrote \
            nothing. Try again in a moment; if it stays locked, end the program that holds it (an sqlite3 shell, a \
            backup).
            """
        case .databaseGone(let path):
            """
            The database "\(path)" (or its journal, -wal or -shm) was removed or replaced while timetrack had it open; \
            nothing more is written to the old file. Start timetrack again to use the file now at that path (restore a backup there first if \
            you meant to).
            """
        case .unusableDatabase(let path, let problem, let fix):
            "Cannot use \"\(path)\" as timetrack's database: \(problem). \(fix)"
        case .database(let reason):
            "The database failed: \(reason)"
        case .syncNeedsSQLite:
            "Apps sync with a timetrack server whose database is an SQLite file (--db), not PostgreSQL."
        }
    }
}

private extension String {
    func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}

private extension Duration {
    /// "5", "0.3": seconds, with a tenth where it matters.
    var inSeconds: String {
        let tenths = (Double(components.seconds) + Double(components.attoseconds) / 1e18) * 10
        let rounded = Int(tenths.rounded())
        return rounded % 10 == 0 ? "\(rounded / 10)" : "\(rounded / 10).\(rounded % 10)"
    }
}
