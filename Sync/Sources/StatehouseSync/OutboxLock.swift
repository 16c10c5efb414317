import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on a file in the outbox's folder, held for a synced store's lifetime: two synced stores
/// on one outbox would give two actions the same sequence number. The kernel lets it go when the process ends, even
/// killed.
@usableFromInline
final class OutboxLock: Sendable {
    private let descriptor: Int32

    @usableFromInline
    init(folder: URL, name: String) throws(SyncError) {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .outboxUnusable(path: folder.path, reason: "\(error)")
        }
        let path = folder.appendingPathComponent("sync.\(name).lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .outboxUnusable(path: folder.path, reason: String(cString: strerror(errno)))
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw .outboxInUse(path: folder.path)
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }
}
