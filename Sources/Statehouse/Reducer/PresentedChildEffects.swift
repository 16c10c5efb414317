/// The cancellation id under which ``Reducer/ifLet(_:action:then:)-561ln`` runs the effects of the child it
/// presents, so that dismissing the child cancels them.
///
/// It is the path of key paths from the store's state down to that child: a key path alone names a place in a type,
/// and one feature can sit in several places (two panels scoped from one reducer, two `ifLet`s of one child feature
/// with a child of its own), where dismissing one child must leave the other's effects running. Each `scope` and
/// `ifLet` an effect passes on its way up to the store adds its key path to the ids of the children presented
/// below it (`Effect.presented(below:)`), its marks and its cancels alike, so they still match.
struct PresentedChildEffects: Hashable, Sendable {
    /// Innermost first.
    private var path: [AnyHashableSendable]

    /// The id of the child at `keyPath`, seen from the state `keyPath` starts at.
    init(keyPath: any AnyKeyPath & Sendable) {
        path = [AnyHashableSendable(keyPath)]
    }

    /// `id` seen from one level up, through `keyPath`, if it is a presented child's (or an element's of a
    /// `forEach`, whose id has one inside); any other id, `nil`.
    static func qualify(_ id: AnyHashableSendable, below keyPath: AnyHashableSendable) -> AnyHashableSendable? {
        if var presented = id.unwrapped(as: Self.self) {
            presented.path.append(keyPath)
            return AnyHashableSendable(presented)
        }
        guard let element = id.unwrapped(as: ElementEffectID.self),
            let inner = qualify(element.id, below: keyPath)
        else { return nil }
        return AnyHashableSendable(ElementEffectID(element: element.element, id: inner))
    }
}

extension Effect {
    /// The same effect, seen from the state one level up through `keyPath` (a `scope` or an `ifLet`): the ids of
    /// the children presented in it name where they are from there.
    func presented(below keyPath: any AnyKeyPath & Sendable) -> Self {
        let step = AnyHashableSendable(keyPath)
        return mappingIDs { PresentedChildEffects.qualify($0, below: step) ?? $0 }
    }
}
