import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Uses `values(bufferingPolicy:)`, the bounded alternative to `values` (issue 10: the `values` buffer is unbounded).
/// In a file of its own: the API is new, and this is the only attack test that needs it to compile.
@Suite("Attack: bounded values buffer (issue 10)")
struct AttackValuesBufferingTests {
    // Issue 10, "the values buffer is unbounded": `.bufferingNewest(1)` keeps only the latest value for a slow loop.
    @Test func bufferingNewestOneGivesTheCurrentValueThenOnlyTheNewest() async {
        let count = StateContainer(0, key: "attack.values.newest")
        var iterator = count.values(bufferingPolicy: .bufferingNewest(1)).makeAsyncIterator()
        #expect(await iterator.next() == 0)
        for value in 1...10 { count.modify(value) }
        #expect(await iterator.next() == 10)
        count.modify(11)
        #expect(await iterator.next() == 11)
    }
}
