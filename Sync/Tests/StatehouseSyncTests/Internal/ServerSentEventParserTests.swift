@testable import StatehouseSync
import SyncFixtures
import Testing

/// The client reads server-sent events as the HTML standard cuts them, whatever the chunks the network brings.
@Suite struct ServerSentEventParserTests {
    @Test func eventsAreCutAtBlankLinesWhateverTheChunksAndLineEnds() {
        let stream = "id: 1\r\nevent: change\r\ndata: {\"a\":1}\r\n\r\n: heartbeat\n\nid: 2\rdata: x\rdata: y\r\r"
        let bytes = Array(stream.utf8)
        for chunkSize in [1, 2, 3, 7, bytes.count] {
            var parser = ServerSentEventParser()
            var events: [ServerSentEvent] = []
            for start in stride(from: 0, to: bytes.count, by: chunkSize) {
                events += parser.feed(bytes[start..<min(start + chunkSize, bytes.count)])
            }
            #expect(events == [
                ServerSentEvent(name: "change", id: "1", data: #"{"a":1}"#),
                ServerSentEvent(name: "message", id: "2", data: "x\ny"),
            ], "chunks of \(chunkSize)")
        }
    }

    @Test func anEventWithoutDataIsNotDispatchedAndAnUnfinishedOneWaits() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("event: nothing\n\ndata: half".utf8)).isEmpty)
        #expect(parser.feed(Array("\n\n".utf8)) == [ServerSentEvent(name: "message", id: nil, data: "half")])
    }
}
