import OpenCombine

/// OpenCombine's `CurrentValueSubject`, the Linux stand-in for Combine. `value += 1` is a read then a send, so
/// two threads lose increments; the library has no atomic update.
enum OpenCombineContender: Contender {
    static let name = "OpenCombine"
    static let rows = Set(ContainerRow.allCases)

    static func make() -> SubjectBox { SubjectBox() }
    static func read(_ subject: SubjectBox) -> Int { subject.subject.value }
    static func write(_ subject: SubjectBox, _ value: Int) { subject.subject.send(value) }
    static func increment(_ subject: SubjectBox) { subject.subject.value += 1 }
    static func subscribe(_ subject: SubjectBox, _ sink: ObserverSink) -> AnyCancellable {
        subject.subject.sink { sink.total &+= $0 }
    }
    static func cancel(_ subscription: AnyCancellable) { subscription.cancel() }

    /// @unchecked: `CurrentValueSubject` locks internally but is not marked `Sendable`.
    final class SubjectBox: @unchecked Sendable {
        let subject = CurrentValueSubject<Int, Never>(0)
    }
}
