/// Why a ``SyncServer`` cannot be set up as asked.
public enum SyncServerError: Error, Equatable, CustomStringConvertible {
    /// The named grant's token is shorter than 16 characters.
    case weakToken(String)
    /// The named grant's digest is not 64 hexadecimal digits.
    case badDigest(String)
    /// A store or container of that name is hosted already.
    case alreadyHosted(String)

    public var description: String {
        switch self {
        case .weakToken(let name): "The token of \(name) is shorter than 16 characters: use a random one, such as 32 hexadecimal digits."
        case .badDigest(let name): "The digest of \(name) is not a SHA-256 in hexadecimal (64 digits)."
        case .alreadyHosted(let name): "\(name) is hosted already."
        }
    }
}
