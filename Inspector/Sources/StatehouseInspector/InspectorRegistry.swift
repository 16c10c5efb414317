import Foundation
import Statehouse
import NIOConcurrencyHelpers

/// What is attached: the stores (and imported recordings) by name, the containers by key, and the hub their events
/// go through. What the routes read, apart from the server.
final class InspectorRegistry: Sendable {
    let hub: EventHub
    let capacity: Int
    private let sources = NIOLockedValueBox<[String: any InspectedSource]>([:])
    private let containers = NIOLockedValueBox<[String: InspectedContainer]>([:])

    init(capacity: Int, bufferPerPage: Int) {
        self.capacity = capacity
        hub = EventHub(bufferPerPage: bufferPerPage)
    }

    /// Adds `source`, replacing (and detaching) one of the same name.
    func add(_ source: any InspectedSource) {
        let replaced = sources.withLockedValue { $0.updateValue(source, forKey: source.name) }
        replaced?.detach()
        hub.publish { _ in .attached }
    }

    /// Adds an imported recording's replay, replacing an earlier replay of that name, never an attached store.
    func addReplay(_ replay: any InspectedSource) throws(InspectorError) {
        let refused = sources.withLockedValue { sources -> Bool in
            if let existing = sources[replay.name], existing.summary.replayOf == nil { return true }
            sources[replay.name] = replay
            return false
        }
        if refused { throw .refused("A store is attached as \(replay.name): detach it to import a replay under that name.") }
        hub.publish { _ in .attached }
    }

    func add(_ container: InspectedContainer) {
        let replaced = containers.withLockedValue { $0.updateValue(container, forKey: container.key) }
        replaced?.detach()
        hub.publish { _ in .attached }
    }

    func removeSource(named name: String) {
        sources.withLockedValue { $0.removeValue(forKey: name) }?.detach()
        hub.publish { _ in .attached }
    }

    func removeContainer(key: String) {
        containers.withLockedValue { $0.removeValue(forKey: key) }?.detach()
        hub.publish { _ in .attached }
    }

    func source(named name: String) -> (any InspectedSource)? {
        sources.withLockedValue { $0[name] }
    }

    var allSources: [any InspectedSource] {
        sources.withLockedValue { $0.values.sorted { $0.name < $1.name } }
    }

    var containerSnapshots: [ContainerSnapshot] {
        containers.withLockedValue { $0.values.map(\.snapshot).sorted { $0.key < $1.key } }
    }

    /// What the page loads first, read under the hub's lock with the last event's id, which it follows from.
    var overview: Overview {
        hub.snapshot { lastID in
            Overview(lastEventID: lastID, stores: allSources.map(\.summary), containers: containerSnapshots)
        }
    }

    struct Overview: Sendable, Encodable {
        let lastEventID: UInt64
        let stores: [StoreSummary]
        let containers: [ContainerSnapshot]
    }

    /// One store's log in full, with the last event's id.
    func detail(of name: String) -> StoreDetail? {
        hub.snapshot { lastID in
            guard var detail = source(named: name)?.detail else { return nil }
            detail.lastEventID = lastID
            return detail
        }
    }

    /// What a page resuming after `id` missed: every log entry past it, in id order. Not the containers: their
    /// events carry no history, and each id would come back in every backlog, which a page's buffer smaller than
    /// their number would never get past; a page reads them again from the overview when its feed opens.
    func backlog(after id: UInt64) -> [(UInt64, InspectorEvent)] {
        allSources.flatMap { source in source.entries(after: id).map { (source.name, $0) } }
            .sorted { $0.1.id < $1.1.id }
            .map { ($0.1.id, InspectorEvent.entry(store: $0.0, $0.1)) }
    }

    func detachAll() {
        for source in sources.withLockedValue({ $0.values }) { source.detach() }
        for container in containers.withLockedValue({ $0.values }) { container.detach() }
    }
}
