// A session recorded by Statehouse (7 actions), replayed through TestStore: each step
// asserts the state its action led to. Made by Recording.testSource; make it again rather than edit it.

import Foundation
import StatehouseTesting
import Testing
@testable import StatehouseTestSupport

@Test func replaysARecordedTallySession() async throws {
    func decoded<Value: Decodable>(_ type: Value.Type, _ json: String) throws -> Value {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }
    let store = TestStore(
        initialState: try decoded(StatehouseTestSupport.Tally.self, #"{"entries":[],"title":"","total":0}"#),
        reducer: TallyReducer.make()
    )
    // 1: TallyAction.rename(##"Groceries "#1" \#(and more)"##)
    await store.send(try decoded(StatehouseTestSupport.TallyAction.self, ##"{"rename":{"_0":"Groceries \"#1\" \\#(and more)"}}"##)) {
        $0 = try decoded(StatehouseTestSupport.Tally.self, ##"{"entries":[],"title":"Groceries \"#1\" \\#(and more)","total":0}"##)
    }
    // 2: TallyAction.add(2)
    await store.send(try decoded(StatehouseTestSupport.TallyAction.self, #"{"add":{"_0":2}}"#)) {
        $0 = try decoded(StatehouseTestSupport.Tally.self, ##"{"entries":[2],"title":"Groceries \"#1\" \\#(and more)","total":0}"##)
    }
    // 3: TallyAction.add(3)
    await store.send(try decoded(StatehouseTestSupport.TallyAction.self, #"{"add":{"_0":3}}"#)) {
        $0 = try decoded(StatehouseTestSupport.Tally.self, ##"{"entries":[2,3],"title":"Groceries \"#1\" \\#(and more)","total":0}"##)
    }
    // 4: TallyAction.refresh
    await store.send(try decoded(StatehouseTestSupport.TallyAction.self, #"{"refresh":{}}"#))
    // 5: TallyAction.sum
    await store.send(try decoded(StatehouseTestSupport.TallyAction.self, #"{"sum":{}}"#))
    // 6, sent by an effect: TallyAction.summed(5)
    await store.receive(try decoded(StatehouseTestSupport.TallyAction.self, #"{"summed":{"_0":5}}"#)) {
        $0 = try decoded(StatehouseTestSupport.Tally.self, ##"{"entries":[2,3],"title":"Groceries \"#1\" \\#(and more)","total":5}"##)
    }
    // 7: TallyAction.add(4)
    await store.send(try decoded(StatehouseTestSupport.TallyAction.self, #"{"add":{"_0":4}}"#)) {
        $0 = try decoded(StatehouseTestSupport.Tally.self, ##"{"entries":[2,3,4],"title":"Groceries \"#1\" \\#(and more)","total":5}"##)
    }
    await store.finish()
}
