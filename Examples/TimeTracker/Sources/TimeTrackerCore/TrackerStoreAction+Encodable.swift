/// What the inspector (`timetrack serve --inspect`) shows of each action of the tracker's store:
/// `{"perform": <the TrackerAction>}`, `{"refresh": {}}`, `{"loaded": {"projects": N}}` (the state itself is in the
/// inspector's diff), `{"lostDatabase": "why"}`. Only encoded: a reply cannot be read back, so the inspector does not
/// import these recordings.
extension TrackerStoreAction: Encodable {
    private enum CodingKeys: String, CodingKey {
        case perform, refresh, loaded, lostDatabase
    }

    private struct Loaded: Encodable {
        let projects: Int
    }

    private struct Nothing: Encodable {}

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .perform(let action, _): try container.encode(action, forKey: .perform)
        case .refresh: try container.encode(Nothing(), forKey: .refresh)
        case .loaded(let state, _): try container.encode(Loaded(projects: state.projects.count), forKey: .loaded)
        case .lostDatabase(let error): try container.encode(String(describing: error), forKey: .lostDatabase)
        }
    }
}
