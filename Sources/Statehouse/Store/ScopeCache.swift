/// The scoped stores a store made, by what they were made from, so that making the same scope again returns the same
/// store while it lives (``Store/scope(state:action:fileID:line:column:)``).
///
/// Closures are not comparable in Swift, so the action function a scope was made with cannot be a key; the place in
/// the source that made it stands for it. The stores are held weakly. Entries of stores that ended are swept when the
/// cache has doubled since the last sweep, so a cache of scopes made from key paths that are values (`\.rows[index]`)
/// does not grow with the number of stores that ended.
struct ScopeCache: Sendable {
    /// What a scoped store was made from.
    struct Key: Hashable, Sendable {
        enum Kind: Hashable, Sendable { case scope, ifLet }

        let keyPath: any AnyKeyPath & Sendable
        /// The scoped store's type: its state and action types.
        let store: ObjectIdentifier
        let kind: Kind
        let site: CallSite

        static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.store == rhs.store && lhs.kind == rhs.kind && lhs.site == rhs.site && lhs.keyPath == rhs.keyPath
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(keyPath)
            hasher.combine(store)
            hasher.combine(kind)
            hasher.combine(site)
        }
    }

    private struct Entry: Sendable {
        weak var store: (any AnyObject & Sendable)?
    }

    private var entries: [Key: Entry] = [:]
    private var sweepAt = 16

    /// The store made from `key`, if it still lives.
    func scope(for key: Key) -> (any AnyObject & Sendable)? {
        entries[key]?.store
    }

    /// Records `store` as made from `key`; returns the store to use, which is one made from `key` meanwhile if it
    /// still lives.
    mutating func insert(_ store: any AnyObject & Sendable, for key: Key) -> any AnyObject & Sendable {
        if let existing = entries[key]?.store { return existing }
        entries[key] = Entry(store: store)
        if entries.count >= sweepAt {
            entries = entries.filter { $0.value.store != nil }
            sweepAt = max(16, 2 * entries.count)
        }
        return store
    }
}

/// A place in the source code: `#fileID`, `#line`, `#column`.
struct CallSite: Hashable, Sendable {
    let fileID: StaticString
    let line: UInt
    let column: UInt

    static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.line == rhs.line, lhs.column == rhs.column else { return false }
        return lhs.fileID.withUTF8Buffer { left in
            rhs.fileID.withUTF8Buffer { right in left.elementsEqual(right) }
        }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(line)
        hasher.combine(column)
        fileID.withUTF8Buffer { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
