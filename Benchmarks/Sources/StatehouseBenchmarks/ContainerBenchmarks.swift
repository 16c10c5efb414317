import Dispatch
import Synchronization

/// The measured value of one row for one contender: a number, and for the contended row whether the count was exact.
struct Cell {
    var value: Double
    var note: String = ""
}

/// Runs every container row for `contender`; `budget` is the time for one run of one row.
func measureContainer<C: Contender>(_ contender: C.Type, budget: Duration) -> [ContainerRow: Cell] {
    var cells: [ContainerRow: Cell] = [:]
    for row in ContainerRow.allCases where C.rows.contains(row) {
        switch row {
        case .read:
            let subject = C.make()
            var total = 0
            let ns = nanosecondsPerCall(budget: budget) { _ in total &+= C.read(subject) }
            blackHole(total)
            cells[row] = Cell(value: ns)
        case .write0:
            cells[row] = Cell(value: writeCost(C.self, observers: 0, budget: budget))
        case .write1:
            cells[row] = Cell(value: writeCost(C.self, observers: 1, budget: budget))
        case .write100:
            cells[row] = Cell(value: writeCost(C.self, observers: 100, budget: budget))
        case .perObserver:
            let with100 = writeCost(C.self, observers: 100, budget: budget)
            let with0 = writeCost(C.self, observers: 0, budget: budget)
            cells[row] = Cell(value: (with100 - with0) / 100)
        case .contendedIncrement:
            cells[row] = contendedIncrements(C.self, perThread: 100_000)
        case .subscribeCancel:
            let subject = C.make()
            let sink = ObserverSink()
            let ns = nanosecondsPerCall(budget: budget) { _ in
                C.cancel(C.subscribe(subject, sink))
            }
            cells[row] = Cell(value: ns)
        case .memoryPerSubscription:
            let sink = ObserverSink()
            let bytes = bytesPerInstance(count: 10_000, setup: C.make) { subject, _ in C.subscribe(subject, sink) }
            cells[row] = Cell(value: bytes)
        }
    }
    return cells
}

private func writeCost<C: Contender>(_ contender: C.Type, observers: Int, budget: Duration) -> Double {
    let subject = C.make()
    let sink = ObserverSink()
    let subscriptions = (0..<observers).map { _ in C.subscribe(subject, sink) }
    let ns = nanosecondsPerCall(budget: budget) { C.write(subject, $0) }
    subscriptions.forEach(C.cancel)
    blackHole(sink.total)
    return ns
}

/// Two threads add 1 `perThread` times each, at once: the time per increment, all increments counted, and whether
/// the final count is exact.
private func contendedIncrements<C: Contender>(_ contender: C.Type, perThread: Int) -> Cell {
    let subject = C.make()
    let start = ContinuousClock.now
    DispatchQueue.concurrentPerform(iterations: 2) { _ in
        for _ in 0..<perThread { C.increment(subject) }
    }
    let ns = nanoseconds(ContinuousClock.now - start) / Double(2 * perThread)
    let lost = 2 * perThread - C.read(subject)
    let note = lost == 0 ? "exact" : "lost \(lost * 100 / (2 * perThread))%"
    return Cell(value: ns, note: note)
}
