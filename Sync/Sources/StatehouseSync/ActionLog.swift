import StatehouseSyncWire

/// An outbox's actions, in order.
///
/// The journal that holds it is copied all the time (the copy the outbox's write waits with, the copy a push loop
/// reads), and an array appended to while another copy holds it copies every element: each dispatch would cost as
/// much as the outbox is long, and an app offline for long would slow down with every action. Here the actions sit
/// in immutable chunks that copies share, and only the last, short one is copied.
struct ActionLog<Action: Codable & Sendable>: Sequence, Sendable {
    fileprivate final class Chunk: Sendable {
        let actions: [PushedAction<Action>]

        init(_ actions: [PushedAction<Action>]) {
            self.actions = actions
        }
    }

    private static var chunkSize: Int { 32 }

    private var chunks: [Chunk] = []
    private var tail: [PushedAction<Action>] = []
    private(set) var count = 0

    init() {}

    init(_ actions: some Sequence<PushedAction<Action>>) {
        for action in actions { append(action) }
    }

    var isEmpty: Bool {
        count == 0
    }

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
    mutating func removeAll(where shouldBeRemoved: (PushedAction<Action>) -> Bool) {
        self = ActionLog(filter { !shouldBeRemoved($0) })
    }

    func makeIterator() -> Iterator {
        Iterator(chunks: chunks, tail: tail)
    }

    struct Iterator: IteratorProtocol {
        fileprivate let chunks: [Chunk]
        fileprivate let tail: [PushedAction<Action>]
        private var chunk = 0
        private var index = 0

        fileprivate init(chunks: [Chunk], tail: [PushedAction<Action>]) {
            self.chunks = chunks
            self.tail = tail
        }

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
    init(from decoder: any Decoder) throws {
        self.init(try [PushedAction<Action>](from: decoder))
    }

    func encode(to encoder: any Encoder) throws {
        try Array(self).encode(to: encoder)
    }
}
