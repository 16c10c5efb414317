import Testing
@testable import Statehouse

final class Owner: AssociatedObjects {}
final class Payload {}

private let nameKey = AssociatedKey<String>()
private let countKey = AssociatedKey<Int>()
private let strongPayloadKey = AssociatedKey<Payload>(.strong)
private let weakPayloadKey = AssociatedKey<Payload>(.weak)

/// Serialized: the tests count entries of the process-wide table.
@Suite("AssociatedObjects", .serialized)
struct AssociatedObjectsTests {
    @Test func valuesAreStoredPerObjectAndPerKey() {
        let first = Owner()
        let second = Owner()
        first.setAssociatedValue("first", for: nameKey)
        first.setAssociatedValue(1, for: countKey)
        second.setAssociatedValue("second", for: nameKey)
        #expect(first.associatedValue(for: nameKey) == "first")
        #expect(first.associatedValue(for: countKey) == 1)
        #expect(second.associatedValue(for: nameKey) == "second")
        #expect(second.associatedValue(for: countKey) == nil)
        first.setAssociatedValue(nil, for: nameKey)
        #expect(first.associatedValue(for: nameKey) == nil)
    }

    @Test func defaultIsMadeOnceAndKept() {
        let owner = Owner()
        var made = 0
        let one = owner.associatedValue(for: countKey) { made += 1; return 42 }
        let two = owner.associatedValue(for: countKey) { made += 1; return 0 }
        #expect(one == 42 && two == 42 && made == 1)
    }

    @Test func strongPolicyKeepsTheValueWeakDoesNot() {
        let owner = Owner()
        weak var strongOne: Payload?
        weak var weakOne: Payload?
        do {
            let kept = Payload()
            let notKept = Payload()
            strongOne = kept
            weakOne = notKept
            owner.setAssociatedValue(kept, for: strongPayloadKey)
            owner.setAssociatedValue(notKept, for: weakPayloadKey)
            #expect(owner.associatedValue(for: weakPayloadKey) === notKept)
        }
        #expect(strongOne != nil)
        #expect(weakOne == nil)
        #expect(owner.associatedValue(for: weakPayloadKey) == nil)
    }

    @Test func deadOwnersValuesAreReleasedByASweep() {
        weak var payload: Payload?
        do {
            let owner = Owner()
            let value = Payload()
            payload = value
            owner.setAssociatedValue(value, for: strongPayloadKey)
        }
        // The owner is gone. Swift has no deinit hook for it, so the table holds the value until a sweep (other
        // suites adding owners at the same time may trigger one first).
        AssociatedObjectsTable.shared.releaseDeadOwners()
        #expect(payload == nil)
    }

    @Test func sweepsRunOnTheirOwnSoTheTableStaysSmall() {
        AssociatedObjectsTable.shared.releaseDeadOwners()
        let before = AssociatedObjectsTable.shared.ownerCount
        for index in 0..<10_000 {
            Owner().setAssociatedValue(index, for: countKey)
        }
        // Each sweep runs after as many new owners as were alive at the last one (at least 16); the margin is for
        // owners that suites running at the same time keep alive.
        #expect(AssociatedObjectsTable.shared.ownerCount <= 2 * before + 64)
    }

    @Test func aNewObjectAtADeadObjectsAddressNeverSeesItsValues() {
        // Allocate and free many objects: the allocator reuses addresses, so some new objects get the identifier
        // of a dead one that had a value.
        var reusedAddresses = 0
        var seen = Set<ObjectIdentifier>()
        for index in 0..<5_000 {
            let owner = Owner()
            let id = ObjectIdentifier(owner)
            if seen.contains(id) { reusedAddresses += 1 }
            seen.insert(id)
            #expect(owner.associatedValue(for: countKey) == nil, "object \(index) saw a dead object's value")
            owner.setAssociatedValue(index, for: countKey)
        }
        #expect(reusedAddresses > 0)
    }
}
