import Foundation
import Statehouse
import NIOConcurrencyHelpers

/// A container as the page shows it.
struct ContainerSnapshot: Sendable, Encodable {
    let key: String
    /// What its `ValueRedaction` lets through; the placeholder's text where it lets nothing through.
    let value: String
    /// Its listeners, the inspector's own left out.
    let listeners: Int
    let changeCount: UInt64
    /// When the inspector last heard of a change; `nil` before the first since it was attached.
    let lastChange: Date?
    /// Whether that change came from another process or machine, through the container's storage.
    let fromStorage: Bool
    /// Whether the container still exists.
    let exists: Bool
}

/// One attached container: a listener of its own wakes a task, which reads the container and publishes what the page
/// shows. The listener only wakes the task, so the container's changes pay no more than for any listener; the
/// container is held weakly, so attaching it does not keep it alive.
final class InspectedContainer: Sendable {
    let key: String
    private let latest: NIOLockedValueBox<ContainerSnapshot>
    /// Set once, at the end of `init`: the task needs `self`.
    private let worker = NIOLockedValueBox<Task<Void, Never>?>(nil)
    private let token: SubscriptionToken

    init<Value: Sendable>(_ container: StateContainer<Value>, values: ValueRedaction<Value>, hub: EventHub) {
        key = container.key
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        token = container.observe { _ in wake.yield() }
        let read: @Sendable (StateContainer<Value>?, Date?) -> ContainerSnapshot = { [key] container, changed in
            guard let container else {
                return ContainerSnapshot(
                    key: key, value: "", listeners: 0, changeCount: 0, lastChange: changed, fromStorage: false, exists: false
                )
            }
            let activity = container.activity
            let text = values.text(for: container.value) ?? Self.redacted
            return ContainerSnapshot(
                key: key, value: text, listeners: max(activity.listenerCount - 1, 0), changeCount: activity.changeCount,
                lastChange: changed, fromStorage: activity.lastChangeCameFromStorage, exists: true
            )
        }
        latest = NIOLockedValueBox(read(container, nil))
        worker.withLockedValue { worker in
            worker = Task.detached { [weak self, weak container] in
                for await _ in wakes {
                    guard let self else { return }
                    let snapshot = read(container, Date())
                    hub.publish { _ in
                        latest.withLockedValue { $0 = snapshot }
                        return .container(snapshot)
                    }
                    if !snapshot.exists { return }
                }
            }
        }
    }

    private static var redacted: String {
        if case .string(let text) = InspectorRedaction.placeholder { text } else { "" }
    }

    var snapshot: ContainerSnapshot {
        latest.withLockedValue { $0 }
    }

    func detach() {
        token.cancel()
        worker.withLockedValue { $0?.cancel() }
    }
}
