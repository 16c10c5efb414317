import Foundation
import Synchronization

/// Something Statehouse noticed that is probably a mistake but is not an error of the call that caused it.
public struct StatehouseDiagnostic: Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, to match on.
    public enum Kind: Sendable, Equatable {
        /// A second live ``StateContainer`` was created with the key of another.
        case duplicateKey
        /// A persisted container was deallocated with changes it could not write.
        case lostWrite
        /// ``StatehouseLifecycle/flushOnTermination()`` could not install its handlers.
        case terminationHandling
        /// An ``Effect/run(priority:operation:catch:)`` effect threw, and had no `catch` handler.
        case unhandledEffectError
        /// Changes other processes make cannot be watched (or watching stopped): they are noticed by polling only.
        /// See ``ExternalChanges/watch(safetyNet:)``.
        case watchingUnavailable
    }

    public let kind: Kind
    /// The state key concerned.
    public let key: String
    /// What happened and what to do about it.
    public let message: String

    public var description: String { message }

    /// A diagnostic for ``StatehouseDiagnostics/report(_:)``: for storages and modules outside Statehouse, so that
    /// one handler sees everything.
    public init(kind: Kind, key: String, message: String) {
        self.kind = kind
        self.key = key
        self.message = message
    }

    static func lostWrite(_ error: StorageError) -> Self {
        Self(
            kind: .lostWrite,
            key: error.key ?? "",
            message: "Statehouse: a persisted container was deallocated with unsaved changes: \(error.message)"
        )
    }

    static func terminationHandling(errno code: Int32) -> Self {
        Self(
            kind: .terminationHandling,
            key: "",
            message: """
                Statehouse: flushOnTermination() could not create its signal pipe (\(String(cString: strerror(code)))), \
                so SIGTERM and SIGINT keep their default action and pending writes would be lost: free file \
                descriptors, or call StatehouseLifecycle.flushPendingWrites() from handlers of your own.
                """
        )
    }

    static func unhandledEffectError(_ error: any Error, action: Any.Type) -> Self {
        Self(
            kind: .unhandledEffectError,
            key: "",
            message: """
                Statehouse: an effect of a store of \(action) threw \(type(of: error)) (\(error)), and its \
                Effect.run has no catch handler, so the error was dropped. Handle the error in the effect: catch it \
                in the operation, or pass `catch: { error, send in … }` to Effect.run and send an action that \
                records the failure.
                """
        )
    }

    /// Following `key` (or, with no key, a database) cannot be pushed: `reason` says why and what to do.
    package static func watchingUnavailable(key: String, reason: String, pollingEvery interval: Duration) -> Self {
        Self(
            kind: .watchingUnavailable,
            key: key,
            message: """
                Statehouse: changes other processes make to \(key.isEmpty ? "the database" : String(reflecting: key)) \
                cannot be watched, so they are looked for every \(interval) instead: \(reason)
                """
        )
    }

    /// The kernel stopped watching `directory`, which was removed or moved away, and it cannot be watched again:
    /// `reason` says why and what to do.
    static func watchingStopped(directory: String, reason: String) -> Self {
        Self(
            kind: .watchingUnavailable,
            key: "",
            message: """
                Statehouse: \(directory) was removed or moved away and cannot be watched again, so changes other \
                processes make in it are noticed only by the followers' safety-net poll, more slowly: \(reason)
                """
        )
    }

    static func duplicateKey(_ key: String) -> Self {
        Self(
            kind: .duplicateKey,
            key: key,
            message: """
                Statehouse: two live StateContainers use the key \(String(reflecting: key)). A key names one piece of \
                state (and its stored entry, when persisted). Give each container its own key, or share the first \
                container instead of creating another.
                """
        )
    }
}

/// Where ``StatehouseDiagnostic``s go: standard error unless you say otherwise.
///
/// ```swift
/// StatehouseDiagnostics.defaultHandler = { logger.warning("\($0)") }
/// // or, for one scope of a task (tests):
/// StatehouseDiagnostics.$handler.withValue({ seen.append($0) }) { … }
/// ```
public enum StatehouseDiagnostics {
    public typealias Handler = @Sendable (StatehouseDiagnostic) -> Void

    /// A handler for the current task and the work it starts; takes precedence over ``defaultHandler``.
    @TaskLocal public static var handler: Handler?

    /// The handler used outside any ``handler`` scope. Writes the message to standard error by default.
    public static var defaultHandler: Handler {
        get { installedDefault.withLock { $0 } }
        set { installedDefault.withLock { $0 = newValue } }
    }

    /// Writes `diagnostic` to standard error.
    public static let standardError: Handler = { diagnostic in
        FileHandle.standardError.write(Data((diagnostic.message + "\n").utf8))
    }

    /// Hands `diagnostic` to the current ``handler``, or else to ``defaultHandler``.
    public static func report(_ diagnostic: StatehouseDiagnostic) {
        (handler ?? defaultHandler)(diagnostic)
    }

    private static let installedDefault = Locked<Handler>(standardError)
}
