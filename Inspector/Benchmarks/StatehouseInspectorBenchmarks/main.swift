// Release-mode benchmark of what the inspector costs a store's `dispatch`, each figure against its baseline in the
// same run:
//
//     swift run -c release --package-path Inspector StatehouseInspectorBenchmarks [--quick]
//
// Four stores of one type, dispatching bursts of 1,000 actions in turn (so that all four see the same machine): one
// that never heard of the inspector, one attached and then detached, one attached with no page open, and one
// attached to a page that stopped reading. The median of the bursts is each store's cost per `dispatch`.
import Foundation
import Statehouse
import StatehouseInspector

struct Shelf: Codable, Sendable {
    var count = 0
    var titles = (0..<20).map { "Title \($0)" }
}

enum ShelfAction: Codable, Sendable {
    case count
}

func reduce(_ state: inout Shelf, _ action: ShelfAction) {
    state.count += 1
}

/// Nanoseconds per call of 1,000 calls of `dispatch` in a row.
func burst(_ store: Store<Shelf, ShelfAction>) -> Double {
    let start = ContinuousClock.now
    for _ in 0..<1_000 { store.dispatch(.count) }
    let elapsed = (ContinuousClock.now - start).components
    return (Double(elapsed.seconds) * 1e9 + Double(elapsed.attoseconds) / 1e9) / 1_000
}

func median(_ values: [Double]) -> Double {
    values.sorted()[values.count / 2]
}

/// A page that asks for the feed and then never reads it.
func stalledPage(_ url: URL) throws -> Int32 {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var small: Int32 = 4_096
    setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(url.port!).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    let request = "GET \(url.path)api/events?since=0 HTTP/1.1\r\nHost: 127.0.0.1:\(url.port!)\r\n\r\n"
    _ = request.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    return socket
}

let bursts = CommandLine.arguments.contains("--quick") ? 50 : 400
let inspector = try await Inspector.start()
let neverHeard = Store(initialState: Shelf(), reducer: reduce)
let detached = Store(initialState: Shelf(), reducer: reduce)
inspector.attach(detached, name: "detached")
inspector.detach(store: "detached")
let attached = Store(initialState: Shelf(), reducer: reduce)
inspector.attach(attached, name: "attached")
let second = try await Inspector.start(bufferPerPage: 100)
let watched = Store(initialState: Shelf(), reducer: reduce)
second.attach(watched, name: "watched")
let page = try stalledPage(second.url)
let noOp = Store(initialState: Shelf(), reducer: reduce)
let noOpTap = noOp.tap { _ in }.tap

var times: [String: [Double]] = [:]
for _ in 0..<bursts {
    for (name, store) in [("never", neverHeard), ("detached", detached), ("attached", attached), ("stalled", watched), ("noop", noOp)] {
        times[name, default: []].append(burst(store))
    }
}
close(page)
await inspector.stop()
await second.stop()

let never = median(times["never"]!), off = median(times["detached"]!)
let on = median(times["attached"]!), stalled = median(times["stalled"]!)
func row(_ name: String, _ nanoseconds: Double, _ ratio: String) {
    print(name.padding(toLength: 62, withPad: " ", startingAt: 0), String(format: "%8.1f ns", nanoseconds), "  ", ratio)
}
print("Inspector: the cost of `dispatch`, 0 subscribers (median of \(bursts) bursts of 1,000; release build, \(ProcessInfo.processInfo.activeProcessorCount) cores)\n")
row("a store that never heard of the inspector", never, "baseline")
row("attached, then detached", off, String(format: "%.2f× the baseline (target: the same)", off / never))
row("attached, no page open", on, String(format: "%.2f× detached (target ≤ 1.5×)", on / off))
row("attached, a page that stopped reading", stalled, String(format: "%.2f× detached", stalled / off))
row("a store's own tap that does nothing", median(times["noop"]!), String(format: "%.2f× detached", median(times["noop"]!) / off))
withExtendedLifetime(noOpTap) {}
