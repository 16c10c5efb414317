import Foundation
import Statehouse

/// A recorded session as one file of JSON lines: the first `{"initialState": …}`, the contents it started from;
/// then one line per action, as a store's recording writes them (`Recording.writeActions(to:)`).
public enum SessionFile {
    public static func write(_ recording: Recording<TrackerContents, LoggedAction>, to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        var data = try encoder.encode(Header(initialState: recording.initialState))
        for recorded in recording.actions {
            data.append(UInt8(ascii: "\n"))
            data.append(try encoder.encode(recorded))
        }
        data.append(UInt8(ascii: "\n"))
        try data.write(to: url, options: .atomic)
    }

    /// - Throws: `DecodingError` naming the line that is not what it should be.
    public static func read(from url: URL) throws -> Recording<TrackerContents, LoggedAction> {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let lines = try Data(contentsOf: url).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        func decode<Value: Decodable>(_ type: Value.Type, line number: Int, _ what: String) throws -> Value {
            do {
                return try decoder.decode(type, from: Data(lines[number]))
            } catch {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: [], debugDescription: "Line \(number + 1) of \(url.path) is not \(what): \(error)",
                    underlyingError: error
                ))
            }
        }
        guard !lines.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(url.path) is empty: it is not a recorded session."))
        }
        let header = try decode(Header.self, line: 0, "a session's start ({\"initialState\": …})")
        let actions = try (1..<lines.count).map { number in
            try decode(RecordedAction<LoggedAction>.self, line: number, "a recorded action")
        }
        return Recording(initialState: header.initialState, actions: actions)
    }

    private struct Header: Codable {
        var initialState: TrackerContents
    }
}
