import Foundation
import StatehouseSyncWire

/// The next push: the actions the server has not answered yet, in order, as many as fit a size.
struct OutboxBatch<Action: Codable & Sendable>: Sendable {
    var actions: [PushedAction<Action>]
    /// Each action's JSON, encoded once for both the size and the body.
    var encoded: [Data]

    /// - Parameters:
    ///   - unpushed: The next actions the server has not answered, in order, as many as a batch may count
    ///     (``SyncJournal/unpushed(upTo:)``).
    ///   - maximumBytes: The most bytes of actions in a batch; the first action goes in whatever its size, so that a
    ///     large one is tried alone rather than never.
    /// - Returns: `nil` when nothing waits.
    /// - Throws: ``SyncError/actionNotEncodable(seq:reason:)``.
    static func next(
        from unpushed: [PushedAction<Action>], maximumBytes: Int
    ) throws(SyncError) -> OutboxBatch? {
        var batch = OutboxBatch(actions: [], encoded: [])
        var bytes = 0
        let encoder = JSONEncoder()
        for pushed in unpushed {
            let json: Data
            do {
                json = try encoder.encode(pushed)
            } catch {
                throw .actionNotEncodable(seq: pushed.seq, reason: "\(error)")
            }
            guard batch.actions.isEmpty || bytes + json.count <= maximumBytes else { break }
            bytes += json.count + 1
            batch.actions.append(pushed)
            batch.encoded.append(json)
        }
        return batch.actions.isEmpty ? nil : batch
    }

    /// The request's body: `{"client": …, "actions": [ … ]}`, from the actions' JSON as encoded.
    func body(client: String) -> Data {
        var body = Data(#"{"client":"#.utf8)
        body.append((try? JSONEncoder().encode(client)) ?? Data(#""""#.utf8))
        body.append(Data(#","actions":["#.utf8))
        for (index, json) in encoded.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(json)
        }
        body.append(Data("]}".utf8))
        return body
    }
}
