import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("One key, one live container")
struct KeyRegistryTests {
    @Test func secondLiveContainerWithAKeyIsReported() throws {
        let reported = Recorder<StatehouseDiagnostic>()
        StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) {
            let first = StateContainer(1, key: "registry.duplicate")
            let second = StateContainer(2, key: "registry.duplicate")
            withExtendedLifetime((first, second)) {}
        }
        let diagnostic = try #require(reported.elements.first)
        #expect(reported.count == 1)
        #expect(diagnostic.kind == .duplicateKey)
        #expect(diagnostic.key == "registry.duplicate")
        #expect(diagnostic.message.contains(#"two live StateContainers use the key "registry.duplicate""#))
        #expect(diagnostic.message.contains("Give each container its own key"))
    }

    @Test func deallocatedContainerFreesItsKey() {
        let reported = Recorder<StatehouseDiagnostic>()
        StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) {
            do {
                let first = StateContainer(1, key: "registry.freed")
                #expect(KeyRegistry.shared.isLive("registry.freed"))
                withExtendedLifetime(first) {}
            }
            #expect(!KeyRegistry.shared.isLive("registry.freed"))
            let second = StateContainer(2, key: "registry.freed")
            withExtendedLifetime(second) {}
        }
        #expect(reported.elements.isEmpty)
    }

    @Test func keyStaysTakenUntilEveryDuplicateIsGone() {
        StatehouseDiagnostics.$handler.withValue({ _ in }) {
            let first = StateContainer(1, key: "registry.counted")
            do {
                let second = StateContainer(2, key: "registry.counted")
                withExtendedLifetime(second) {}
            }
            #expect(KeyRegistry.shared.isLive("registry.counted"))
            withExtendedLifetime(first) {}
        }
    }
}
