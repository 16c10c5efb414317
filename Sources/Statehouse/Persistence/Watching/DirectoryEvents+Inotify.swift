#if canImport(Glibc)
import Foundation
import Glibc

/// The kernel's notifications about the entries of one directory. On Linux, a watch of the process's one inotify
/// instance, whose events one thread reads for every directory watched.
final class DirectoryEvents: Sendable {
    private let instance: Inotify
    private let watch: Int32

    /// Starts watching `directory`; `onEvent` runs on the watching thread, and must return quickly.
    init(directory: String, onEvent: @escaping @Sendable (DirectoryEvent) -> Void) throws(FileWatchFailure) {
        instance = try Inotify.shared()
        watch = try instance.add(directory, onEvent)
    }

    /// Nothing to do on Linux: inotify reports every entry of the directory.
    func follow(names: Set<String>) {}

    /// Stops watching; an event already read may still be delivered.
    func cancel() {
        instance.remove(watch)
    }
}

/// One inotify instance and the thread that reads it. The thread blocks in `read` until the kernel has events, so
/// an idle process never wakes up; it lives as long as the process.
private final class Inotify: Sendable {
    typealias Handler = @Sendable (DirectoryEvent) -> Void

    /// What a commit or a replacement by rename does to an entry, and what ends the watch itself.
    /// `IN_EXCL_UNLINK`: a file already unlinked (a replaced database's old log, say) says nothing more.
    private static let mask = UInt32(
        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK
    )

    private static let current = Locked<Inotify?>(nil)

    /// The process's instance, made (with its thread) on first use. A failure (the user's inotify instances used
    /// up) is not kept: the next watch tries again.
    static func shared() throws(FileWatchFailure) -> Inotify {
        try current.withLock { (current: inout Inotify?) throws(FileWatchFailure) -> Inotify in
            if let current { return current }
            let descriptor = inotify_init1(Int32(IN_CLOEXEC))
            guard descriptor >= 0 else {
                throw FileWatchFailure(description: """
                    could not create an inotify instance (\(String(cString: strerror(errno)))); if the user's \
                    instances are used up, raise fs.inotify.max_user_instances
                    """)
            }
            let instance = Inotify(descriptor: descriptor)
            let thread = Thread {
                // Named for `top -H` and /proc, at most 15 characters (all the kernel keeps), through /proc: the
                // Glibc module does not import `pthread_setname_np`, and `Thread.name` did not reach the kernel.
                try? "StatehouseWatch".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
                instance.readEvents()
            }
            thread.start()
            current = instance
            return instance
        }
    }

    private let descriptor: Int32
    private let handlers = Locked<[Int32: Handler]>([:])

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    func add(_ directory: String, _ handler: @escaping Handler) throws(FileWatchFailure) -> Int32 {
        try handlers.withLock { (handlers: inout [Int32: Handler]) throws(FileWatchFailure) -> Int32 in
            let watch = inotify_add_watch(descriptor, directory, Self.mask)
            guard watch >= 0 else {
                let reason = String(cString: strerror(errno))
                let advice = errno == ENOSPC ? "; raise fs.inotify.max_user_watches" : ""
                throw FileWatchFailure(description: "could not watch \(directory) with inotify (\(reason))\(advice)")
            }
            handlers[watch] = handler
            return watch
        }
    }

    func remove(_ watch: Int32) {
        handlers.withLock { handlers in
            guard handlers.removeValue(forKey: watch) != nil else { return }
            inotify_rm_watch(descriptor, watch)
        }
    }

    /// The thread's loop: each `read` returns every event queued, which makes one event per directory.
    private func readEvents() {
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(
            byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment
        )
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, capacity)
            if count < 0 {
                if errno == EINTR { continue }
                // Not expected with a buffer this size. Every watch is over, and says so; the next one makes a new
                // instance.
                Self.current.withLock { if $0 === self { $0 = nil } }
                deliver(Self.parse(UnsafeRawBufferPointer(start: buffer, count: 0), ended: true))
                return
            }
            deliver(Self.parse(UnsafeRawBufferPointer(start: buffer, count: count), ended: false))
        }
    }

    /// What one read says, by watch.
    private struct Batch {
        var events: [Int32: DirectoryEvent] = [:]
        /// The kernel's queue overflowed: every watch may have missed events.
        var lost = false
        /// The instance can no longer be read: every watch is over.
        var ended = false

        mutating func add(_ names: Set<String>, to watch: Int32) {
            guard case .changed(let earlier) = events[watch] ?? .changed([]) else { return }
            events[watch] = .changed(earlier.union(names))
        }
    }

    private static func parse(_ bytes: UnsafeRawBufferPointer, ended: Bool) -> Batch {
        var batch = Batch()
        batch.ended = ended
        let header = MemoryLayout<inotify_event>.size
        var offset = 0
        while offset + header <= bytes.count {
            let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
            let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[(offset + header)..<(offset + header + Int(event.len))])
            offset += header + Int(event.len)
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                batch.lost = true
            } else if event.mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                batch.events[event.wd] = .gone
            } else if event.len > 0 {
                // The name is NUL-padded to its length.
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                batch.add([name], to: event.wd)
            }
        }
        return batch
    }

    private func deliver(_ batch: Batch) {
        let calls: [(Handler, DirectoryEvent)] = handlers.withLock { handlers in
            if batch.ended || batch.lost {
                let event: DirectoryEvent = batch.ended ? .gone : .unknown
                defer { if batch.ended { handlers = [:] } }
                return handlers.values.map { ($0, event) }
            }
            return batch.events.compactMap { watch, event in
                guard let handler = handlers[watch] else { return nil }
                if event == .gone {
                    // A directory moved away is still watched where it went: stop that too.
                    handlers[watch] = nil
                    inotify_rm_watch(descriptor, watch)
                }
                return (handler, event)
            }
        }
        for (handler, event) in calls { handler(event) }
    }
}
#endif
