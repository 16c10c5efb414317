/// What a client calls itself: 1 to 64 characters of `A-Z a-z 0-9 . _ -`. It names the client's sequence numbers on
/// the server, so two clients must never share one; a client makes a random one once and keeps it with its outbox.
public enum ClientID {
    public static let maximumLength = 64

    public static func isValid(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maximumLength && id.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default: false
            }
        }
    }
}
