/// What a subscriber selects from a store's state: a key path, which every subscriber of it shares one selection
/// group under, or a function of the subscriber's own.
@usableFromInline
enum StateSelector<State, Value>: Sendable {
    case keyPath(any KeyPath<State, Value> & Sendable)
    case function(@Sendable (State) -> Value)

    /// The key of the group the subscriber shares, or `nil` for a group of its own.
    @inlinable
    var sharingKey: SelectionKey? {
        guard case .keyPath(let keyPath) = self else { return nil }
        return SelectionKey(keyPath)
    }

    /// The function a new group selects with; made once per group, not per subscriber.
    ///
    /// A key path is read by offset when it can be (see ``load(_:)``), else through the key path.
    @inlinable
    var read: @Sendable (State) -> Value {
        switch self {
        case .function(let select):
            return select
        case .keyPath(let keyPath):
            return Self.load(keyPath) ?? { $0[keyPath: keyPath] }
        }
    }

    /// A load of `keyPath`'s value at its offset, when it leads to a stored property laid out inline in the state;
    /// `nil` for any other key path.
    ///
    /// Every dispatch reads each watched key path once, and through the key path the standard library projects it
    /// component by component and looks up generic metadata each time (about 400 instructions for a struct's `Int`
    /// field); by offset it is one load. `MemoryLayout.offset(of:)` answers only for key paths whose value can be read
    /// through a pointer at that offset (stored properties of structs and tuples: not computed, optional-chained,
    /// `weak` or class properties), so both read the same value. A load runs no code of the caller's, so it may run
    /// under a lock where a key path, which may run a getter that takes locks of its own, may not.
    @inlinable
    static func load(_ keyPath: any KeyPath<State, Value> & Sendable) -> (@Sendable (State) -> Value)? {
        guard let offset = MemoryLayout<State>.offset(of: keyPath) else { return nil }
        return { state in storedProperty(of: state, atOffset: offset, as: Value.self) }
    }
}
