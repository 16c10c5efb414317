import Foundation
import StatehouseTestSupport
import Testing
@testable import StatehouseInspector

/// A diff lists only the changed paths, old → new, and applying it to the older tree gives the newer: what the page's
/// diffs and the log's time travel stand on.
@Suite("Diffs of state trees")
struct JSONTreeDiffTests {
    @Test func onlyTheChangedPathsAreListed() throws {
        let old = try JSONTree(encoding: ["a": [1, 2, 3], "b": [4]])
        let new = try JSONTree(encoding: ["a": [1, 9, 3, 5], "c": [6]])
        let changes = old.changes(to: new)
        #expect(changes.map(\.pathText) == ["a[1]", "a[3]", "b", "c"])
        #expect(changes[0] == TreeChange(path: [.key("a"), .index(1)], old: .number(2), new: .number(9)))
        #expect(changes[2].new == nil && changes[3].old == nil)
        #expect(old.changes(to: old).isEmpty)
    }

    @Test func aShrunkArrayListsItsRemovedElementsLastFirst() throws {
        let old = JSONTree.array([.number(1), .number(2), .number(3)])
        let new = JSONTree.array([.number(1)])
        #expect(old.changes(to: new).map(\.pathText) == ["[2]", "[1]"])
        #expect(old.applying(old.changes(to: new)) == new)
    }

    @Test func aValueOfAnotherKindIsOneChange() {
        let old = JSONTree.object(["x": .array([.number(1)])])
        let new = JSONTree.object(["x": .string("one")])
        #expect(old.changes(to: new) == [TreeChange(path: [.key("x")], old: .array([.number(1)]), new: .string("one"))])
        #expect(JSONTree.number(1).changes(to: .null) == [TreeChange(path: [], old: .number(1), new: .null)])
    }

    /// Random trees, each changed at random: applying the diff to the old tree always gives the new one.
    @Test(arguments: 0..<4)
    func applyingADiffGivesTheNewerTree(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let old = Self.tree(depth: 3, &random)
            let new = Self.mutated(old, &random)
            #expect(old.applying(old.changes(to: new)) == new)
        }
    }

    private static func tree(depth: Int, _ random: inout SplitMix64) -> JSONTree {
        switch depth == 0 ? random.next(below: 4) : random.next(below: 6) {
        case 0: return .null
        case 1: return .bool((random.next(below: 2) == 0))
        case 2: return .number(Double(random.next(below: 5)))
        case 3: return .string(["a", "b", "c"][random.next(below: 3)])
        case 4: return .array((0..<random.next(below: 4)).map { _ in tree(depth: depth - 1, &random) })
        default:
            let keys = ["k", "l", "m", "n"].filter { _ in (random.next(below: 2) == 0) }
            return .object(Dictionary(uniqueKeysWithValues: keys.map { ($0, tree(depth: depth - 1, &random)) }))
        }
    }

    private static func mutated(_ tree: JSONTree, _ random: inout SplitMix64) -> JSONTree {
        guard random.next(below: 4) != 0 else { return Self.tree(depth: 2, &random) }
        switch tree {
        case .array(var elements):
            if !elements.isEmpty, (random.next(below: 2) == 0) { elements.removeLast() }
            elements = elements.map { (random.next(below: 2) == 0) ? mutated($0, &random) : $0 }
            if (random.next(below: 2) == 0) { elements.append(Self.tree(depth: 1, &random)) }
            return .array(elements)
        case .object(var members):
            for key in members.keys where (random.next(below: 2) == 0) { members[key] = mutated(members[key]!, &random) }
            if (random.next(below: 2) == 0) { members["new"] = .bool(true) }
            if let key = members.keys.first, (random.next(below: 2) == 0) { members[key] = nil }
            return .object(members)
        default:
            return tree
        }
    }
}
