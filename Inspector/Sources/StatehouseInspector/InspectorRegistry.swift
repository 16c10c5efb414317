import Foundation
import Statehouse
import Synchronization

/// What is attached: the stores (and imported recordings) by name, the containers by key, and the hub their events
/// go through. What the routes read, apart from the server.
final class InspectorRegistry: Sendable {
    let hub: EventHub
    let capacity: Int
    private let sources = Mutex<[String: any InspectedSource]>([:])
    private let containers = Mutex<[String: InspectedContainer]>([:])

    init(capacity: Int, bufferPerPage: Int) {
        self.capacity = capacity
        hub = EventHub(bufferPerPage: bufferPerPage)
    }

    /// Adds `source`, replacing (and detaching) one of the same name.
    func add(_ source: any InspectedSource) {
        let replaced = sources.withLock { $0.updateValue(source, forKey: source.name) }
        replaced?.detach()
        hub.publish { _ in .attached }
    }

    func add(_ container: InspectedContainer) {
        let replaced = containers.withLock { $0.updateValue(container, forKey: container.key) }
        replaced?.detach()
        hub.publish { _ in .attached }
    }

    func removeSource(named name: String) {
        sources.withLock { $0.removeValue(forKey: name) }?.detach()
        hub.publish { _ in .attached }
    }

    func removeContainer(key: String) {
        containers.withLock { $0.removeValue(forKey: key) }?.detach()
        hub.publish { _ in .attached }
    }

    func source(named name: String) -> (any InspectedSource)? {
        sources.withLock { $0[name] }
    }

    var allSources: [any InspectedSource] {
        sources.withLock { $0.values.sorted { $0.name < $1.name } }
    }

    var containerSnapshots: [ContainerSnapshot] {
        containers.withLock { $0.values.map(\.snapshot).sorted { $0.key < $1.key } }
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

    /// What a page resuming after `id` missed: every log entry past it, in id order, then every container as it is.
    func backlog(after id: UInt64) -> [(UInt64, InspectorEvent)] {
        let entries = allSources.flatMap { source in source.entries(after: id).map { (source.name, $0) } }
            .sorted { $0.1.id < $1.1.id }
            .map { ($0.1.id, InspectorEvent.entry(store: $0.0, $0.1)) }
        return entries + containerSnapshots.map { (entries.last?.0 ?? id, .container($0)) }
    }

    func detachAll() {
        for source in sources.withLock({ $0.values }) { source.detach() }
        for container in containers.withLock({ $0.values }) { container.detach() }
    }
}
