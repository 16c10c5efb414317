/// Who watches which names in which directories: the bookkeeping of ``FileWatcher``, apart from the kernel, its
/// thread and its lock.
///
/// `Directory` identifies a directory (its device and inode in ``FileWatcher``), so that two spellings of one path
/// share one kernel watch.
struct FileWatchRegistry<Directory: Hashable> {
    typealias Callback = @Sendable () -> Void

    private struct Subscriber {
        let directory: Directory
        let names: Set<String>
        let onChange: Callback
        let onGone: Callback
    }

    private var subscribers: [UInt64: Subscriber] = [:]
    private var byDirectory: [Directory: Set<UInt64>] = [:]
    private var lastID: UInt64 = 0

    /// Adds a subscriber for changes of `names` in `directory`; `onGone` is what ``removeDirectory(_:)`` returns
    /// for it.
    ///
    /// - Returns: Its id, and whether the directory was not watched yet (then the caller starts watching it).
    mutating func add(
        _ directory: Directory, names: Set<String>, onChange: @escaping Callback, onGone: @escaping Callback = {}
    ) -> (id: UInt64, isNewDirectory: Bool) {
        lastID += 1
        subscribers[lastID] = Subscriber(directory: directory, names: names, onChange: onChange, onGone: onGone)
        let isNew = byDirectory[directory] == nil
        byDirectory[directory, default: []].insert(lastID)
        return (lastID, isNew)
    }

    /// Removes subscriber `id`.
    ///
    /// - Returns: Its directory, and whether nobody else watches it any more (then the caller stops watching it);
    ///   `nil` if there is no such subscriber (its directory was removed already).
    mutating func remove(_ id: UInt64) -> (directory: Directory, wasLast: Bool)? {
        guard let subscriber = subscribers.removeValue(forKey: id) else { return nil }
        let directory = subscriber.directory
        byDirectory[directory]?.remove(id)
        guard byDirectory[directory]?.isEmpty == true else { return (directory, false) }
        byDirectory[directory] = nil
        return (directory, true)
    }

    /// The names watched in `directory`, by anyone.
    func names(in directory: Directory) -> Set<String> {
        (byDirectory[directory] ?? []).reduce(into: []) { $0.formUnion(subscribers[$1]?.names ?? []) }
    }

    /// Who to tell that `names` changed in `directory`; every subscriber of the directory when `names` is `nil`
    /// (events were lost). Each subscriber once, keyed by id, so that callers can merge several batches.
    func callbacks(in directory: Directory, named names: Set<String>?) -> [UInt64: Callback] {
        var result: [UInt64: Callback] = [:]
        for id in byDirectory[directory] ?? [] {
            guard let subscriber = subscribers[id] else { continue }
            if let names, subscriber.names.isDisjoint(with: names) { continue }
            result[id] = subscriber.onChange
        }
        return result
    }

    /// Forgets `directory` (the kernel stopped watching it: it was removed or moved); returns its subscribers'
    /// `onGone`, to be called once. Their later ``remove(_:)`` finds nothing.
    mutating func removeDirectory(_ directory: Directory) -> [UInt64: Callback] {
        var gone: [UInt64: Callback] = [:]
        for id in byDirectory.removeValue(forKey: directory) ?? [] {
            gone[id] = subscribers.removeValue(forKey: id)?.onGone
        }
        return gone
    }
}
