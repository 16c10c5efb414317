import Foundation
import Statehouse

/// What an ``InMemoryStorage`` does to a call that meets an injected fault.
public enum InMemoryStorageFault: Sendable {
    /// Throws `error` (by default a `StorageError` of kind `.io` naming the operation and key), changing nothing.
    ///
    /// A transaction fails as a database's does when it is rolled back: its transform runs, and what it returned
    /// is not stored. `then` runs after the data is left as it was and before the error is thrown, on the calling
    /// thread and outside the storage's lock: the place for another writer to change the key (see
    /// ``InMemoryStorage/changeOutside(key:_:)``), as one does between a lost connection and the next.
    case fail(StorageError? = nil, then: (@Sendable () -> Void)? = nil)
    /// Does what was asked, then throws as if the answer of the commit was lost: the storage's
    /// ``InMemoryStorage/outcomeIsUnknown(after:)`` says `true` for this error. For writes (`save`, `remove`,
    /// `transact`).
    case failAfterCommit
    /// Waits `duration` on the storage's clock before doing what was asked, blocking the calling thread (as slow
    /// I/O does). With a `ManualClock`, the call waits until the test advances the clock past it; wait for it to
    /// start with `ManualClock.waitForSleepers(_:)`.
    case delay(Duration)
    /// Runs `body` on the calling thread, outside the storage's lock, then does what was asked. In a transaction,
    /// `body` runs after the transform and before the commit, which then stores what the transform returned
    /// whatever `body` changed: a storage whose isolation failed.
    case run(@Sendable () -> Void)
}

/// How many calls an injected fault applies to.
public enum InMemoryStorageFaultTimes: Sendable, Equatable {
    /// The next `count` matching calls.
    case times(Int)
    /// Every matching call, until ``InMemoryStorage/removeFaults()``.
    case always
    /// Every `period`-th matching call that no other fault took, counted from the injection.
    case every(Int)

    /// The next matching call.
    public static let once = times(1)
}

/// The operations of an ``InMemoryStorage`` that a fault applies to, or that a count counts.
public struct InMemoryStorageOperations: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// `load(key:)` and `loadWithFingerprint(key:)`.
    public static let load = Self(rawValue: 1 << 0)
    /// `save(_:key:)` and `saveReturningFingerprint(_:key:)`.
    public static let save = Self(rawValue: 1 << 1)
    public static let remove = Self(rawValue: 1 << 2)
    public static let fingerprint = Self(rawValue: 1 << 3)
    public static let transact = Self(rawValue: 1 << 4)
    /// `watchChanges(of:_:)`: a failure refuses to watch, as a storage out of watch descriptors does.
    public static let watch = Self(rawValue: 1 << 5)

    /// Everything that reads the data.
    public static let reads: Self = [.load, .fingerprint]
    /// Everything that changes the data.
    public static let writes: Self = [.save, .remove, .transact]
    public static let all: Self = [.reads, .writes, .watch]

    /// The name of the single operation this set holds, for error messages.
    var storageOperation: StorageError.Operation {
        switch self {
        case .load: .load
        case .save: .save
        case .remove: .remove
        case .fingerprint: .fingerprint
        case .watch: .watch
        default: .transact
        }
    }
}

/// The keys an injected fault applies to.
public struct InMemoryStorageKeys: Sendable {
    let matches: @Sendable (String) -> Bool

    /// Keys for which `predicate` is `true`.
    public static func matching(_ predicate: @escaping @Sendable (String) -> Bool) -> Self {
        Self(matches: predicate)
    }

    /// Every key.
    public static let all = Self { _ in true }

    /// Only `key`.
    public static func only(_ key: String) -> Self {
        Self { $0 == key }
    }

    /// The keys under which a persisted container keeps bytes it could not decode, so that no save overwrites
    /// them: a fault here is a full disk or a read-only place for them.
    public static let keptAside = Self { $0.contains(".undecodable.") }
}

/// The last change of a key in an ``InMemoryStorage``.
public struct InMemoryStorageChange<Instant: Sendable>: Sendable {
    public let key: String
    /// What the key holds since; `nil` if the change removed it.
    public let data: Data?
    /// When it happened, on the storage's clock.
    public let instant: Instant
    /// Whether it was made with ``InMemoryStorage/changeOutside(key:to:)`` (another process), rather than through
    /// the storage's `StateStorage` methods.
    public let isOutside: Bool
}
