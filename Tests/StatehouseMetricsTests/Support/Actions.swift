/// The state of the test stores.
struct Profile: Equatable, Sendable {
    var name = ""
    var visits = 0
    var tab = Tab.home
}

enum Tab: Sendable {
    case home, settings
}

/// Every shape of case: a payload, a labelled payload, several labelled values, and none.
enum ProfileAction: Equatable, Sendable {
    case rename(String)
    case visit
    case select(tab: Tab)
    case setPassword(old: String, new: String)
}

/// Writes its payload into its description, as enums made readable by hand often do.
enum TalkativeAction: Sendable, CustomStringConvertible {
    case signIn(password: String)
    case signOut

    var description: String {
        switch self {
        case .signIn(let password): "sign in with \(password)"
        case .signOut: "signing out"
        }
    }
}

/// An action that is not an enum.
struct Ping: Sendable {
    var secret: String
}

@Sendable func reduce(_ profile: inout Profile, _ action: ProfileAction) {
    switch action {
    case .rename(let name): profile.name = name
    case .visit: profile.visits += 1
    case .select(let tab): profile.tab = tab
    case .setPassword: break
    }
}
