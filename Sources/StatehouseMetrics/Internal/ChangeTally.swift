import Synchronization

/// How many of a container's changes one listener has counted.
///
/// A listener may be called once for several changes, so it counts by the container's change count instead of by
/// its calls. Its calls never overlap and the count never goes backwards, so each difference is the number of
/// changes since the previous call.
final class ChangeTally: Sendable {
    private let counted: Atomic<UInt64>

    init(from count: UInt64) {
        counted = Atomic(count)
    }

    /// The changes since the previous call, given the container's change count now.
    func changes(upTo count: UInt64) -> UInt64 {
        count - counted.exchange(count, ordering: .relaxed)
    }
}
