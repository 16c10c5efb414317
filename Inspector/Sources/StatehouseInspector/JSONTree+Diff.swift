extension JSONTree {
    /// The paths where `newer` differs from this tree, each with its value before and after, depth first, in key
    /// order. An array that grew lists its new elements in ascending order; one that shrank, its removed ones in
    /// descending order, so that ``applying(_:)`` can take the changes one by one.
    public func changes(to newer: JSONTree) -> [TreeChange] {
        var changes: [TreeChange] = []
        Self.collect(from: self, to: newer, at: [], into: &changes)
        return changes
    }

    private static func collect(from old: JSONTree, to new: JSONTree, at path: [TreeChange.Step], into changes: inout [TreeChange]) {
        switch (old, new) {
        case (.object(let before), .object(let after)):
            for key in Set(before.keys).union(after.keys).sorted() {
                let step = path + [.key(key)]
                switch (before[key], after[key]) {
                case (let old?, let new?): collect(from: old, to: new, at: step, into: &changes)
                case (let old?, nil): changes.append(TreeChange(path: step, old: old, new: nil))
                case (nil, let new?): changes.append(TreeChange(path: step, old: nil, new: new))
                case (nil, nil): break
                }
            }
        case (.array(let before), .array(let after)):
            for index in 0..<min(before.count, after.count) {
                collect(from: before[index], to: after[index], at: path + [.index(index)], into: &changes)
            }
            for index in before.count..<max(before.count, after.count) {
                changes.append(TreeChange(path: path + [.index(index)], old: nil, new: after[index]))
            }
            for index in (after.count..<max(before.count, after.count)).reversed() {
                changes.append(TreeChange(path: path + [.index(index)], old: before[index], new: nil))
            }
        default:
            if old != new { changes.append(TreeChange(path: path, old: old, new: new)) }
        }
    }

    /// This tree with `changes` (made by ``changes(to:)`` from it) applied: the newer tree.
    public func applying(_ changes: [TreeChange]) -> JSONTree {
        changes.reduce(into: self) { tree, change in tree.set(change.new, at: change.path[...]) }
    }

    private mutating func set(_ value: JSONTree?, at path: ArraySlice<TreeChange.Step>) {
        guard let step = path.first else {
            self = value ?? .null
            return
        }
        let rest = path.dropFirst()
        switch (self, step) {
        case (.object(var members), .key(let key)):
            if rest.isEmpty {
                members[key] = value
            } else {
                var member = members[key] ?? .null
                member.set(value, at: rest)
                members[key] = member
            }
            self = .object(members)
        case (.array(var elements), .index(let index)):
            if rest.isEmpty, value == nil {
                if elements.indices.contains(index) { elements.remove(at: index) }
            } else if index == elements.count {
                var element = JSONTree.null
                element.set(value, at: rest)
                elements.append(element)
            } else if elements.indices.contains(index) {
                elements[index].set(value, at: rest)
            }
            self = .array(elements)
        default:
            // A change below a value of another kind: the change of kind is listed at this path itself.
            break
        }
    }
}
