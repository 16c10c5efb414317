import Observation

/// An `@Observable` class. Observation tracking is one-shot: an observer that wants every change re-registers
/// after each one, and that is the cost per observer measured here. It is not thread-safe and has no way to cancel
/// a tracking, so those rows do not apply.
enum ObservableContender: Contender {
    static let name = "@Observable"
    static let rows: Set<ContainerRow> = [.read, .write0, .write1, .write100, .perObserver, .memoryPerSubscription]

    static func make() -> Tracked { Tracked() }
    static func read(_ subject: Tracked) -> Int { subject.box.value }
    static func write(_ subject: Tracked, _ value: Int) {
        subject.box.value = value
        for sink in subject.sinks { track(subject, sink) }
    }
    static func increment(_ subject: Tracked) {}
    static func subscribe(_ subject: Tracked, _ sink: ObserverSink) -> ObserverSink {
        subject.sinks.append(sink)
        track(subject, sink)
        return sink
    }
    static func cancel(_ subscription: ObserverSink) {}

    private static func track(_ subject: Tracked, _ sink: ObserverSink) {
        let box = subject.box
        withObservationTracking { sink.total &+= box.value } onChange: { sink.total &+= 1 }
    }

    @Observable final class Box {
        var value = 0
    }

    /// @unchecked: used from one thread only (the contended row does not apply).
    final class Tracked: @unchecked Sendable {
        let box = Box()
        var sinks: [ObserverSink] = []
    }
}
