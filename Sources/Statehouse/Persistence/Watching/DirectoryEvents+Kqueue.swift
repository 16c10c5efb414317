#if canImport(Darwin)
import Darwin
import Dispatch

/// The kernel's notifications about the entries of one directory. On Apple platforms, kqueue through Dispatch
/// file-system-object sources, all on one serial queue: one source on the directory (entries added, removed,
/// renamed), and one on each watched file that exists (written to, extended, removed, renamed). A file replaced by
/// rename is seen on the directory, and its new inode gets a source of its own.
final class DirectoryEvents: Sendable {
    /// Every source of the process delivers here.
    private static let queue = DispatchQueue(label: "Statehouse.watch")

    private struct WatchedFile {
        let device: UInt64
        let inode: UInt64
        let source: any DispatchSourceFileSystemObject
    }

    private struct State {
        var directory: (any DispatchSourceFileSystemObject)?
        var names: Set<String> = []
        /// The watched names that exist, with their current file's source.
        var files: [String: WatchedFile] = [:]
    }

    private let path: String
    private let onEvent: @Sendable (DirectoryEvent) -> Void
    /// Touched on `queue` only; `Locked` so that the type is `Sendable`.
    private let state = Locked(State())

    /// Starts watching `directory`; `onEvent` runs on the watching queue, and must return quickly.
    init(directory: String, onEvent: @escaping @Sendable (DirectoryEvent) -> Void) throws(FileWatchFailure) {
        path = directory
        self.onEvent = onEvent
        let descriptor = open(directory, O_EVTONLY)
        guard descriptor >= 0 else {
            throw FileWatchFailure(description: "could not watch \(directory) (\(String(cString: strerror(errno))))")
        }
        let source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: descriptor, eventMask: [.write, .delete, .rename, .revoke], queue: Self.queue
        )
        source.setEventHandler { [weak self] in self?.directoryChanged() }
        source.setCancelHandler { close(descriptor) }
        state.withLock { $0.directory = source }
        source.resume()
    }

    /// Watches the files named `names` in the directory (and stops watching the others).
    func follow(names: Set<String>) {
        Self.queue.async { [weak self] in self?.update(names: names) }
    }

    /// Stops watching; an event already on the queue may still be delivered.
    func cancel() {
        Self.queue.async { [state] in
            state.withLock { state in
                state.directory?.cancel()
                state.directory = nil
                for file in state.files.values { file.source.cancel() }
                state.files = [:]
                state.names = []
            }
        }
    }

    private func update(names: Set<String>) {
        let opened = state.withLock { state -> Set<String> in
            guard state.directory != nil else { return [] }
            for name in state.names.subtracting(names) { state.files.removeValue(forKey: name)?.source.cancel() }
            state.names = names
            return reopenChangedFiles(&state)
        }
        // A write between the subscriber's first look and the new source's start told nobody.
        if !opened.isEmpty { onEvent(.changed(opened)) }
    }

    /// Entries were added, removed or renamed, or the directory itself went away.
    private func directoryChanged() {
        let event = state.withLock { state -> DirectoryEvent? in
            guard let directory = state.directory else { return nil }
            if !directory.data.isDisjoint(with: [.delete, .rename, .revoke]) {
                directory.cancel()
                state.directory = nil
                for file in state.files.values { file.source.cancel() }
                state.files = [:]
                return .gone
            }
            let changed = reopenChangedFiles(&state)
            return changed.isEmpty ? nil : .changed(changed)
        }
        if let event { onEvent(event) }
    }

    /// A watched file was written to, extended, removed or renamed.
    private func fileChanged(_ name: String) {
        let changed = state.withLock { state -> Bool in
            guard let file = state.files[name] else { return false }
            if !file.source.data.isDisjoint(with: [.delete, .rename]) {
                file.source.cancel()
                state.files[name] = nil
                _ = reopenChangedFiles(&state)
            }
            return true
        }
        if changed { onEvent(.changed([name])) }
    }

    /// Gives each watched name that now names another file (or none) a source on its current file; returns those
    /// names.
    private func reopenChangedFiles(_ state: inout State) -> Set<String> {
        var changed: Set<String> = []
        for name in state.names {
            var info = stat()
            let exists = stat(path + "/" + name, &info) == 0
            let current = state.files[name]
            if let current, exists, current.device == UInt64(info.st_dev), current.inode == UInt64(info.st_ino) {
                continue
            }
            if current == nil && !exists { continue }
            current?.source.cancel()
            state.files[name] = exists ? openSource(for: name) : nil
            changed.insert(name)
        }
        return changed
    }

    private func openSource(for name: String) -> WatchedFile? {
        let descriptor = open(path + "/" + name, O_EVTONLY)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            close(descriptor)
            return nil
        }
        let source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: descriptor, eventMask: [.write, .extend, .delete, .rename], queue: Self.queue
        )
        source.setEventHandler { [weak self] in self?.fileChanged(name) }
        source.setCancelHandler { close(descriptor) }
        source.resume()
        return WatchedFile(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), source: source)
    }
}
#endif
