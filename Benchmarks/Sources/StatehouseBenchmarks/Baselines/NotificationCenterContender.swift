import Foundation

/// The fifth article's starting point: store the value, post a notification, observers read it.
enum NotificationCenterContender: Contender {
    static let name = "NotificationCenter"
    static let rows: Set<ContainerRow> = [.write0, .write1, .write100, .perObserver, .subscribeCancel, .memoryPerSubscription]
    static let changed = Notification.Name("benchmark.changed")

    static func make() -> Posting { Posting() }
    static func read(_ subject: Posting) -> Int { subject.value }
    static func write(_ subject: Posting, _ value: Int) {
        subject.value = value
        subject.center.post(name: changed, object: nil)
    }
    static func increment(_ subject: Posting) {}
    static func subscribe(_ subject: Posting, _ sink: ObserverSink) -> (Posting, any NSObjectProtocol) {
        (subject, subject.center.addObserver(forName: changed, object: nil, queue: nil) { _ in
            sink.total &+= subject.value
        })
    }
    static func cancel(_ subscription: (Posting, any NSObjectProtocol)) {
        subscription.0.center.removeObserver(subscription.1)
    }

    /// @unchecked: used from one thread only (the contended row does not apply).
    final class Posting: @unchecked Sendable {
        let center = NotificationCenter()
        var value = 0
    }
}
