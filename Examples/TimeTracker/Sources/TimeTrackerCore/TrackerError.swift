/// Why an action was refused. The message is meant for the user: the CLI prints it, the API returns it.
public enum TrackerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The name was empty once surrounding white space was trimmed.
    case emptyName
    /// The name is longer than ``ProjectName/maximumLength`` characters.
    case nameTooLong
    /// The name contains a control character (a new line, a tab, …).
    case nameHasControlCharacters
    /// Another project has this name, ignoring case.
    case duplicateName(existing: String)
    /// No project has this name or id.
    case projectNotFound(String)
    /// The project already has a running activity.
    case alreadyRunning(project: String)
    /// The project has no running activity.
    case notRunning(project: String)
    /// The database could not be opened, read or written.
    case database(String)

    public var description: String {
        switch self {
        case .emptyName:
            "A project needs a name."
        case .nameTooLong:
            "A project name has at most \(ProjectName.maximumLength) characters."
        case .nameHasControlCharacters:
            "A project name cannot contain control characters such as new lines or tabs."
        case .duplicateName(let existing):
            "A project named \"\(existing)\" already exists (names are compared ignoring case)."
        case .projectNotFound(let project):
            "There is no project \(project)."
        case .alreadyRunning(let project):
            "\"\(project)\" is already running; stop it first."
        case .notRunning(let project):
            "\"\(project)\" is not running."
        case .database(let reason):
            "The database failed: \(reason)"
        }
    }
}
