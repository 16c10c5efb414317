import StatehouseSyncWire

/// An outbox's actions, in order.
///
/// The journal that holds it is copied all the time (the copy the outbox's write waits with, the copy a push loop
/// reads), and an array appended to while another copy holds it copies every element: each dispatch would cost as
/// much as the outbox is long, and an app offline for long would slow down with every action. Here the actions sit
/// in immutable chunks that copies share, and only the last, short one is copied.
@usableFromInline
struct ActionLog<Action: Codable & Sendable>: Sequence, Sendable {
    @usableFromInline
    final class Chunk: Sendable {
        @usableFromInline let actions: [PushedAction<Action>]

        @inlinable
        init(_ actions: [PushedAction<Action>]) {
            self.actions = actions
        }
    }

    @inlinable
    static var chunkSize: Int { 32 }

    @usableFromInline var chunks: [Chunk] = []
    @usableFromInline var tail: [PushedAction<Action>] = []
    @usableFromInline private(set) var count = 0

    @inlinable
    init() {}

    @inlinable
    init(_ actions: some Sequence<PushedAction<Action>>) {
        for action in actions { append(action) }
    }

    @inlinable
    var isEmpty: Bool {
        count == 0
    }

    @inlinable
    mutating func append(_ action: PushedAction<Action>) {
        tail.append(action)
        count += 1
        if tail.count == Self.chunkSize {
            chunks.append(Chunk(tail))
            tail = []
        }
    }

    /// Rebuilds the log without the actions `shouldBeRemoved` picks: as long as the log, once per answer or change
    /// from the server, not per dispatch.
    @inlinable
    mutating func removeAll(where shouldBeRemoved: (PushedAction<Action>) -> Bool) {
        self = ActionLog(filter { !shouldBeRemoved($0) })
    }

    @inlinable
    func makeIterator() -> Iterator {
        Iterator(chunks: chunks, tail: tail)
    }

    @usableFromInline
    struct Iterator: IteratorProtocol {
        @usableFromInline let chunks: [Chunk]
        @usableFromInline let tail: [PushedAction<Action>]
        @usableFromInline var chunk = 0
        @usableFromInline var index = 0

        @inlinable
        init(chunks: [Chunk], tail: [PushedAction<Action>]) {
            self.chunks = chunks
            self.tail = tail
        }

        @inlinable
        mutating func next() -> PushedAction<Action>? {
            let actions = chunk < chunks.count ? chunks[chunk].actions : tail
            guard index < actions.count else {
                guard chunk < chunks.count else { return nil }
                chunk += 1
                index = 0
                return next()
            }
            defer { index += 1 }
            return actions[index]
        }
    }
}

/// Encoded as the array it stands for.
extension ActionLog: Codable {
    @inlinable
    init(from decoder: any Decoder) throws {
        self.init(try [PushedAction<Action>](from: decoder))
    }

    @inlinable
    func encode(to encoder: any Encoder) throws {
        try Array(self).encode(to: encoder)
    }
}
