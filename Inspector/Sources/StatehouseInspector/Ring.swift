/// The last `capacity` elements appended, oldest first: what bounds the inspector's memory however long a store
/// runs.
struct Ring<Element> {
    let capacity: Int
    private var storage: [Element] = []
    /// Where the oldest element is, once the storage is full.
    private var head = 0

    init(capacity: Int) {
        precondition(capacity > 0, "A ring holds at least one element.")
        self.capacity = capacity
    }

    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }

    /// Appends `element`; returns the oldest one, which it pushed out if the ring was full.
    @discardableResult
    mutating func append(_ element: Element) -> Element? {
        guard storage.count == capacity else {
            storage.append(element)
            return nil
        }
        let oldest = storage[head]
        storage[head] = element
        head = (head + 1) % capacity
        return oldest
    }

    /// The elements, oldest first.
    var elements: [Element] {
        Array(storage[head...] + storage[..<head])
    }

    var last: Element? {
        storage.isEmpty ? nil : storage[(head + storage.count - 1) % storage.count]
    }
}

extension Ring: Sendable where Element: Sendable {}
