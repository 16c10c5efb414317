/// Whether and how a persisted container or store follows the changes that others (other processes, other storage
/// instances) make to its stored data.
///
/// ```swift
/// StateContainer(Settings(), key: "settings", storage: .file(directory: url))                        // .watch
/// StateContainer(Settings(), key: "settings", storage: .file(directory: url), externalChanges: .ignore)
/// ```
///
/// Following needs a ``ChangeDetectingStorage`` (files, SQLite); on other storages every choice is `.ignore`.
/// Whichever way a change is noticed, it is taken the same way: the container reads the key's fingerprint, reloads
/// only if it differs from what it last read or wrote, and a local change not yet written wins over the outside one.
/// See <doc:PersistingState> for what is watched and which changes only the safety net can notice.
public enum ExternalChanges: Sendable, Equatable {
    /// Be told: the storage says when the key may have changed (a ``ChangeNotifyingStorage``: inotify on Linux, a
    /// kqueue source on Apple platforms), so a change made by another process reaches the listeners within
    /// milliseconds. A slow poll every `safetyNet` catches what the notifications cannot see (a network file
    /// system, say). Where the storage cannot notify, the container polls at the ``poll`` rate instead; when
    /// watching fails (no inotify watches left, a directory that cannot be created), the reason is reported
    /// through ``StatehouseDiagnostics`` too.
    case watch(safetyNet: Duration)
    /// Check every `interval`: a change made by another process reaches the container's listeners within about
    /// `interval` plus one read. Local changes not yet written win over outside ones.
    case poll(every: Duration)
    /// Never reload.
    case ignore

    /// Be told, with a poll every 5 seconds as the safety net. The default.
    public static let watch = ExternalChanges.watch(safetyNet: .seconds(5))

    /// Check four times a second.
    public static let poll = ExternalChanges.poll(every: pollInterval)

    /// The interval of ``poll``, which is also where watching is unavailable.
    package static let pollInterval = Duration.milliseconds(250)
}
