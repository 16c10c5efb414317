import Foundation
import Synchronization
@testable import Statehouse

/// A weak reference any thread may read: it is never reassigned, and the object is `Sendable`.
final class SharedWeak<Object: AnyObject & Sendable>: Sendable {
    weak let object: Object?
    init(_ object: Object?) { self.object = object }
}

/// A value set once another thread may read it: a scoped store made after the closure that reads it.
final class SharedSlot<Value: Sendable>: Sendable {
    private let slot = Locked<Value?>(nil)

    init() {}

    var value: Value? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }

    func set(_ value: Value?) {
        self.value = value
    }

    /// Takes the value out under the lock and lets it go outside it: a token let go cancels, and may wait for a call
    /// that reads this slot.
    func letGo() {
        let taken = slot.withLock { $0.take() }
        withExtendedLifetime(taken) {}
    }
}

/// A counter to share between threads and closures (an `Atomic` in a class, so that closures capture a reference).
final class SharedCounter: Sendable {
    private let atomic: Atomic<Int>

    init(_ value: Int = 0) {
        atomic = Atomic(value)
    }

    /// Adds 1; returns the new value.
    @discardableResult
    func increment() -> Int {
        atomic.add(1, ordering: .sequentiallyConsistent).newValue
    }

    var value: Int {
        atomic.load(ordering: .sequentiallyConsistent)
    }
}

/// A flag to share between threads and closures.
final class SharedFlag: Sendable {
    private let atomic = Atomic<Bool>(false)

    init() {}

    /// Sets the flag; returns whether it was set already.
    @discardableResult
    func set() -> Bool {
        atomic.exchange(true, ordering: .sequentiallyConsistent)
    }

    var isSet: Bool {
        atomic.load(ordering: .sequentiallyConsistent)
    }
}

/// A value behind the library's lock, whose sections ThreadSanitizer sees (it does not see `Mutex`'s on Linux).
final class ARBox<T: Sendable>: Sendable {
    private let locked: Locked<T>
    init(_ value: T) { locked = Locked(value) }
    var value: T {
        get { locked.withLock { $0 } }
        set { locked.withLock { $0 = newValue } }
    }
}

/// A thread-safe list of what a listener heard.
final class SGHeard<T: Sendable>: Sendable {
    private let storage = Locked<[T]>([])
    func append(_ value: T) { storage.withLock { $0.append(value) } }
    var values: [T] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
}

/// A thread-safe flag or counter.
final class SGCounter: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ n: Int = 1) { value.add(n, ordering: .sequentiallyConsistent) }
    var current: Int { value.load(ordering: .sequentiallyConsistent) }
}

/// A thread-safe holder of one value (a token, a store reference).
final class SGSlot<T: Sendable>: Sendable {
    private let storage: Locked<T?>
    init(_ value: T? = nil) { storage = Locked(value) }
    func set(_ value: T?) { storage.withLock { $0 = value } }
    func take() -> T? { storage.withLock { value in defer { value = nil }; return value } }
    var value: T? { storage.withLock { $0 } }
}

/// The first thing that went wrong, kept by any thread.
final class FirstFailure: Sendable {
    private let failure = Locked<String?>(nil)

    func record(_ message: String) {
        failure.withLock { $0 = $0 ?? message }
    }

    var value: String? { failure.withLock { $0 } }
}
