import Statehouse

/// A small app state for the tests of recordings made into tests: named so that a generated test file can refer to
/// it (`StatehouseTestSupport.Tally`), with an effect that sends an action back.
public struct Tally: Codable, Equatable, Sendable {
    public var entries: [Int] = []
    public var total = 0
    public var title = ""

    public init() {}
}

public enum TallyAction: Codable, Equatable, Sendable {
    case add(Int)
    case rename(String)
    /// Asks an effect to sum the entries; it sends `.summed` back.
    case sum
    case summed(Int)
    /// Changes nothing.
    case refresh
}

public enum TallyReducer {
    /// Set to make the reducer add one too many: how a test sees a recording's test fail when behaviour changes.
    @TaskLocal public static var addsOneTooMany = false

    /// The reducer, as it behaves when made (see ``addsOneTooMany``).
    public static func make() -> Reducer<Tally, TallyAction> {
        let extra = addsOneTooMany ? 1 : 0
        return Reducer { tally, action in
            switch action {
            case .add(let number):
                tally.entries.append(number + extra)
                return .none
            case .rename(let title):
                tally.title = title
                return .none
            case .sum:
                let entries = tally.entries
                return .run { send in send(.summed(entries.reduce(0, +))) }
            case .summed(let total):
                tally.total = total
                return .none
            case .refresh:
                return .none
            }
        }
    }
}
