/// A first-in first-out queue on an array: appends at the end, takes from a moving head, and starts over once
/// drained (keeping a small array's capacity, so that a steady trickle of work does not allocate).
@usableFromInline
struct FIFOQueue<Element> {
    @usableFromInline var elements: [Element] = []
    @usableFromInline var head = 0

    @inlinable
    init() {}

    @inlinable
    mutating func append(_ element: Element) {
        elements.append(element)
    }

    @inlinable
    mutating func popFirst() -> Element? {
        guard head < elements.count else { return nil }
        let element = elements[head]
        head += 1
        if head == elements.count {
            elements.removeAll(keepingCapacity: elements.count <= 64)
            head = 0
        }
        return element
    }
}

extension FIFOQueue: Sendable where Element: Sendable {}
