import Foundation

extension Recording where Action: Codable {
    /// Writes the recorded actions to `url` as JSON lines, one `{"date": …, "action": …}` object per line.
    ///
    /// The initial state is not written: give it to ``init(initialState:contentsOf:)`` when loading.
    public func writeActions(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        var data = Data()
        for recorded in actions {
            data.append(try encoder.encode(recorded))
            data.append(UInt8(ascii: "\n"))
        }
        try data.write(to: url, options: .atomic)
    }

    /// Loads actions written by ``writeActions(to:)``, to replay from `initialState`.
    ///
    /// - Throws: `DecodingError` for a line that is not a recorded action, with the line number in its context.
    public init(initialState: State, contentsOf url: URL) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let lines = try Data(contentsOf: url).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        var actions: [RecordedAction<Action>] = []
        for (number, line) in lines.enumerated() {
            do {
                actions.append(try decoder.decode(RecordedAction<Action>.self, from: Data(line)))
            } catch {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: [],
                    debugDescription: "Line \(number + 1) of \(url.path) is not a recorded action: \(error)",
                    underlyingError: error
                ))
            }
        }
        self.init(initialState: initialState, actions: actions)
    }
}
