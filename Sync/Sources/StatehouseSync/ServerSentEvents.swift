import Foundation

/// One server-sent event: its `event:` name (`message` when none), its `id:` and its `data:` lines joined.
struct ServerSentEvent: Sendable, Equatable {
    var name: String
    var id: String?
    var data: String

    /// Not an event of the stream: what a feed yields first, once the server answered 200, so that a feed that
    /// starts quiet (the client is up to date) still tells that the server is reachable.
    static let opened = ServerSentEvent(name: "", id: nil, data: "")
}

/// Cuts a stream of bytes into server-sent events, as the HTML standard says: lines end with CR, LF or CRLF; a blank
/// line ends an event; a line starting with `:` is a comment (a heartbeat); `data:` lines are joined with LF.
struct ServerSentEventParser: Sendable {
    private var line: [UInt8] = []
    private var lastWasCR = false
    private var name = ""
    private var id: String?
    private var data: [String] = []

    /// The events `bytes` completes.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if lastWasCR, byte == UInt8(ascii: "\n") {
                lastWasCR = false
                continue
            }
            lastWasCR = byte == UInt8(ascii: "\r")
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if let event = endLine() { events.append(event) }
            } else {
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else { return dispatch() }
        guard line.first != UInt8(ascii: ":") else { return nil }
        let text = String(decoding: line, as: UTF8.self)
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event": name = String(value)
        case "data": data.append(String(value))
        case "id" where !value.contains("\0"): id = String(value)
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            name = ""
            data = []
        }
        guard !data.isEmpty else { return nil }
        return ServerSentEvent(name: name.isEmpty ? "message" : name, id: id, data: data.joined(separator: "\n"))
    }
}
