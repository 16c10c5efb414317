import Foundation

/// What the page's feed carries: a store's new log entry, a container's new value, or a change in what is attached.
enum InspectorEvent: Sendable {
    case entry(store: String, LogEntry)
    case container(ContainerSnapshot)
    case attached

    /// The event as server-sent-event text, with `id` as its id.
    func serverSentEvent(id: UInt64) -> String {
        let (name, data): (String, Data)
        switch self {
        case .entry(let store, let entry):
            name = "entry"
            data = (try? InspectorJSON.encoder.encode(EntryEvent(store: store, entry: entry))) ?? Data()
        case .container(let snapshot):
            name = "container"
            data = (try? InspectorJSON.encoder.encode(snapshot)) ?? Data()
        case .attached:
            name = "attached"
            data = Data("{}".utf8)
        }
        return "id: \(id)\nevent: \(name)\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
    }

    private struct EntryEvent: Encodable {
        let store: String
        let entry: LogEntry
    }
}

/// How the inspector writes JSON: sorted keys, ISO 8601 dates with milliseconds.
enum InspectorJSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date))
        }
        return encoder
    }()
}
