/// A parent's action wrapping a child's, as `Store.scope` makes them, and payloads nested deeper still.
enum AppAction: Sendable {
    case profile(ProfileAction)
    case login(Credentials)
    indirect case batch([AppAction])
    case reset
}

struct Credentials: Sendable {
    var user: String
    var password: String
}
