/// A first-in first-out queue on an array: appends at the end, takes from a moving head.
///
/// A taken element is released at once (its slot becomes `nil`), and the taken prefix is dropped as soon as it is
/// half the array, so memory follows what is waiting, never what was already taken: a queue that always has a
/// couple of elements waiting — and so is never empty — stays small. Dropping a prefix that long moves at most as
/// many elements as were taken since the last drop, so `popFirst` stays O(1) amortized. A drained queue keeps a small
/// array's capacity, so that a steady trickle of work does not allocate.
@usableFromInline
struct FIFOQueue<Element> {
    @usableFromInline var elements: [Element?] = []
    @usableFromInline var head = 0

    @inlinable
    init() {}

    /// The number of elements waiting.
    @inlinable
    var count: Int { elements.count - head }

    @inlinable
    var isEmpty: Bool { head == elements.count }

    @inlinable
    mutating func append(_ element: Element) {
        elements.append(element)
    }

    @inlinable
    mutating func popFirst() -> Element? {
        guard head < elements.count else { return nil }
        let element = elements[head].take()
        head += 1
        if head == elements.count {
            elements.removeAll(keepingCapacity: elements.count <= 64)
            head = 0
        } else if head >= 32 && head * 2 >= elements.count {
            elements.removeFirst(head)
            head = 0
        }
        return element
    }

    /// The element `popFirst` would take.
    @inlinable
    var first: Element? {
        isEmpty ? nil : elements[head]
    }

    /// The element waiting last.
    @inlinable
    var last: Element? {
        isEmpty ? nil : elements[elements.count - 1]
    }

    /// Replaces the element waiting last; the queue must not be empty.
    @inlinable
    mutating func replaceLast(with element: Element) {
        precondition(!isEmpty, "no element to replace")
        elements[elements.count - 1] = element
    }

    /// How many elements the underlying array holds, taken ones not yet dropped included: for tests of memory.
    var storageCount: Int { elements.count }
}

extension FIFOQueue: Sendable where Element: Sendable {}
