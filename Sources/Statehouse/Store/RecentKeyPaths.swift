/// The key-path objects a store was last subscribed with, and the selection group each one leads to: a lookup by
/// identity before the lookup by value.
///
/// Finding a key path's group by value hashes and compares it component by component (about 800 instructions, most
/// of a subscribe + cancel's work beyond allocation). But a view subscribes with the same literal each time, and a
/// literal without arguments is one object for the program's life, so the last few objects seen find their group
/// with a pointer comparison. Entries hold their key paths, so that an address is never reused while it is here; the
/// table is small and fixed, so key paths made anew at each use (`\.rows[id]`) only take turns in it.
@usableFromInline
struct RecentKeyPaths: Sendable {
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline let keyPath: any AnyKeyPath & Sendable
        @usableFromInline let group: Int

        @inlinable
        init(keyPath: any AnyKeyPath & Sendable, group: Int) {
            self.keyPath = keyPath
            self.group = group
        }
    }

    @usableFromInline static var capacity: Int { 8 }

    @usableFromInline private(set) var entries: [Entry] = []
    /// Where the next entry goes once the table is full: the oldest one is replaced.
    @usableFromInline private(set) var nextReplaced = 0

    @inlinable
    init() {}

    /// The group of `keyPath` if this very object was seen.
    @inlinable
    func group(of keyPath: any AnyKeyPath & Sendable) -> Int? {
        for entry in entries where entry.keyPath === keyPath {
            return entry.group
        }
        return nil
    }

    /// Remembers that `keyPath` leads to `group`.
    @inlinable
    mutating func remember(_ keyPath: any AnyKeyPath & Sendable, group: Int) {
        let entry = Entry(keyPath: keyPath, group: group)
        if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            entries[nextReplaced] = entry
            nextReplaced = (nextReplaced + 1) % Self.capacity
        }
    }

    /// Forgets every key path: groups were let go, and their numbers may be given to others.
    @inlinable
    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        nextReplaced = 0
    }
}
