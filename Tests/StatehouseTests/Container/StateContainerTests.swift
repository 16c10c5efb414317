import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("StateContainer basics")
struct StateContainerTests {
    @Test func holdsKeyAndInitialValue() {
        let theme = StateContainer("blue", key: "basics.themeColor")
        #expect(theme.key == "basics.themeColor")
        #expect(theme.value == "blue")
    }

    @Test func modifyAndOperatorReplaceTheValue() {
        let rating = StateContainer<Int?>(nil, key: "basics.appRating")
        rating.modify(4)
        #expect(rating.value == 4)
        rating ~> nil
        #expect(rating.value == nil)
    }

    @Test func updateChangesInPlaceAndReturnsTheClosureResult() {
        let theme = StateContainer("blue", key: "basics.update")
        let length = theme.update { $0 += "!"; return $0.count }
        #expect(length == 5)
        #expect(theme.value == "blue!")
    }

    @Test func updateThatThrowsKeepsItsChangesNotifiesAndRethrows() {
        struct Refused: Error {}
        let count = StateContainer(0, key: "basics.throwingUpdate")
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        #expect(throws: Refused.self) {
            try count.update { (value: inout Int) throws(Refused) in
                value = 7
                throw Refused()
            }
        }
        #expect(count.value == 7)
        #expect(seen.elements == [7])
        token.cancel()
    }

    @Test func didModifyNotifiesAfterAnInPlaceChangeOfAReferenceType() {
        final class CEO: @unchecked Sendable {  // test-only: mutated on this thread only
            var name: String
            init(name: String) { self.name = name }
        }
        let ceo = StateContainer(CEO(name: "John Sculley"), key: "basics.currentCEO")
        let names = Recorder<String>()
        let token = ceo.observe { names.append($0.name) }
        ceo.value.name = "Tim Cook"
        ceo.didModify()
        #expect(names.elements == ["Tim Cook"])
        token.cancel()
    }

    @Test func descriptionShowsKeyAndValue() {
        let flag = StateContainer(true, key: "basics.flag")
        #expect(flag.description == #"StateContainer(key: "basics.flag", value: true)"#)
    }

    @Test func observeIsCalledAfterEachChangeWithTheNewValue() {
        let count = StateContainer(0, key: "basics.observe")
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        count.modify(1)
        count.update { $0 += 1 }
        count ~> 10
        #expect(seen.elements == [1, 2, 10])
        token.cancel()
    }

    @Test func initialDeliversTheCurrentValueBeforeObserveReturns() {
        let count = StateContainer(5, key: "basics.initial")
        let seen = Recorder<Int>()
        let token = count.observe(initial: true) { seen.append($0) }
        #expect(seen.elements == [5])
        count.modify(6)
        #expect(seen.elements == [5, 6])
        token.cancel()
    }

    @Test func cancelledTokenStopsCalls() {
        let count = StateContainer(0, key: "basics.cancel")
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        count.modify(1)
        token.cancel()
        token.cancel()
        count.modify(2)
        #expect(seen.elements == [1])
        #expect(token.isCancelled)
    }

    @Test func releasingTheTokenCancels() {
        let count = StateContainer(0, key: "basics.releaseToken")
        let seen = Recorder<Int>()
        var token: SubscriptionToken? = count.observe { seen.append($0) }
        count.modify(1)
        withExtendedLifetime(token) {}
        token = nil
        count.modify(2)
        #expect(seen.elements == [1])
    }

    @Test func tokensStoredInASetLiveAsLongAsTheSet() {
        let count = StateContainer(0, key: "basics.bag")
        let seen = Recorder<Int>()
        var bag: Set<SubscriptionToken>? = []
        count.observe { seen.append($0) }.store(in: &bag!)
        count.observe { seen.append($0 * 100) }.store(in: &bag!)
        count.modify(1)
        bag = nil
        count.modify(2)
        #expect(seen.elements.sorted() == [1, 100])
    }

    @Test func queueDeliveryRunsOnTheQueueInOrder() async {
        let queue = DispatchQueue(label: "test.delivery", attributes: .concurrent)
        let count = StateContainer(0, key: "basics.queue")
        let seen = Recorder<Int>()
        let token = count.observe(on: .queue(queue)) { value in
            dispatchPrecondition(condition: .onQueue(queue))
            seen.append(value)
        }
        for value in 1...1_000 { count.modify(value) }
        #expect(await eventually { seen.count == 1_000 })
        #expect(seen.elements == Array(1...1_000))
        token.cancel()
    }

    @Test func mainActorDeliveryRunsOnTheMainThread() async {
        let count = StateContainer(0, key: "basics.mainActor")
        let onMain = Recorder<Bool>()
        let mainMarker = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: mainMarker, value: true)
        let token = count.observe(on: .mainActor) { _ in
            onMain.append(DispatchQueue.getSpecific(key: mainMarker) == true)
        }
        count.modify(1)
        count.modify(2)
        #expect(await eventually { onMain.count == 2 })
        #expect(onMain.elements == [true, true])
        token.cancel()
    }
}
