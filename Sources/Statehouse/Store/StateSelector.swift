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
    /// A key path is read by the property's offset when it leads to a stored property laid out inline in the state.
    /// Every dispatch reads each watched key path once, and through the key path the standard library projects it
    /// component by component and looks up generic metadata each time (about 400 instructions for a struct's `Int`
    /// field); by offset it is one load. `MemoryLayout.offset(of:)` answers only for key paths whose value can be read
    /// through a pointer at that offset (stored properties of structs and tuples: not computed, optional-chained or
    /// class properties), so both read the same value.
    @inlinable
    var read: @Sendable (State) -> Value {
        switch self {
        case .function(let select):
            return select
        case .keyPath(let keyPath):
            guard let offset = MemoryLayout<State>.offset(of: keyPath) else { return { $0[keyPath: keyPath] } }
            return { state in withUnsafeBytes(of: state) { $0.load(fromByteOffset: offset, as: Value.self) } }
        }
    }
}
