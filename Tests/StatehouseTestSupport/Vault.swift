import Foundation

/// A value whose encoding refuses its secret, the way Foundation's encoders report it: the refused value rides in the
/// error, and its description quotes it.
public struct Vault: Codable, Equatable, Sendable {
    public var secret = ""

    public init(secret: String = "") {
        self.secret = secret
    }

    public init(from decoder: any Decoder) throws {
        secret = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        guard secret.isEmpty else {
            let context = EncodingError.Context(codingPath: [], debugDescription: "Refused: \(secret).")
            throw EncodingError.invalidValue(secret, context)
        }
        var container = encoder.singleValueContainer()
        try container.encode(secret)
    }
}
