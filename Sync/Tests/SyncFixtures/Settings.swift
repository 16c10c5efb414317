/// The container the tests sync: an app's settings, two fields that two apps may change apart.
public struct Settings: Codable, Sendable, Equatable {
    public var theme: String
    public var fontSize: Int

    public init(theme: String = "light", fontSize: Int = 12) {
        self.theme = theme
        self.fontSize = fontSize
    }
}
