import Foundation
import StatehouseSyncWire
import Synchronization

extension RemoteStorage {
    /// Follows `key`'s feed from now on (once: asking again does nothing), until the storage goes.
    ///
    /// - Returns: Whether this call started it: the storage's first use of the key.
    @discardableResult
    func follow(_ key: String) -> Bool {
        followers.withLock { followers in
            guard followers.feeds[key] == nil else { return false }
            let storage = WeakStorage(self)
            followers.feeds[key] = Task { [connection] in
                await Self.feedLoop(key, connection: connection) { storage.storage }
            }
            return true
        }
    }

    /// Reads the feed, and reconnects after each end or failure with back-off, resuming from the version last
    /// heard. Holds the storage only while it takes an event in: the storage's going cancels the loop.
    private static func feedLoop(
        _ key: String, connection: ContainerConnection, storage: @Sendable () -> RemoteStorage?
    ) async {
        var backoff = Backoff()
        while !Task.isCancelled {
            // Resumes after the version last heard, so that a feed that reconnects sends nothing already known.
            guard let lastHeard = storage().map({ try? $0.cache.entry(key).version }) else { return }
            do {
                for try await event in connection.feed(key, after: lastHeard) {
                    guard let storage = storage() else { return }
                    if event == .opened {
                        backoff.reset()
                        storage.reached()
                        storage.schedulePush()
                    } else {
                        storage.heard(event, key: key)
                    }
                }
            } catch {
                let delay = backoff.next()
                storage()?.updateHealth { $0.failed(error as? SyncError ?? .unreachable("\(error)"), retryingIn: delay) }
                try? await Task.sleep(for: delay)
                continue
            }
            // The server ended the feed (a shutdown, a follower cut off): reconnect, backing off if it keeps ending.
            try? await Task.sleep(for: backoff.next())
        }
    }

    /// A `value` or `removed` event: the server's value at the event's version. A write waiting for the server is
    /// pushed now: it was made on an older version, which the policy decides about.
    private func heard(_ event: ServerSentEvent, key: String) {
        guard let version = event.id.flatMap({ Int64($0) }) else { return }
        let value: Data?
        switch event.name {
        case ContainerEvent.value: value = Data(event.data.utf8)
        case ContainerEvent.removed: value = nil
        default: return
        }
        record(key) { $0.heard(value, version: version) }
        if (try? cache.entry(key).pending) != nil { schedulePush() }
    }
}

/// The storage, for a loop that must not keep it alive.
private struct WeakStorage: Sendable {
    weak var storage: RemoteStorage?

    init(_ storage: RemoteStorage) {
        self.storage = storage
    }
}
