import Foundation
import Statehouse

/// UUIDs a test can predict: `00000000-0000-0000-0000-000000000000`, then `…-000000000001`, and so on.
///
/// ```swift
/// let uuids = IncrementingUUIDs()
/// let store = TestStore(initialState: Todos(), environment: Environment(uuid: uuids.next), reducer: todos)
/// await store.send(.add) { $0.items = [Todo(id: UUID(0))] }
/// ```
public final class IncrementingUUIDs: Sendable {
    private let count = Locked<UInt64>(0)

    public init() {}

    /// The next UUID; safe from any thread.
    @Sendable public func next() -> UUID {
        UUID(count.withLock { count in
            defer { count += 1 }
            return count
        })
    }
}

extension UUID {
    /// The UUID whose last 64 bits are `value`, the rest zero: what ``IncrementingUUIDs`` makes `value`th.
    public init(_ value: UInt64) {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 { bytes[15 - index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        self.init(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
    }
}
