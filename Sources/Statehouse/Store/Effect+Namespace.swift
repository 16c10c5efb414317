extension Effect {
    /// The same effect with every cancellation id it uses (marks, cancels, throttles) put under `namespace`, so
    /// that two copies of one feature, each under its own namespace, do not cancel each other's effects.
    func namespaced(by namespace: AnyHashableSendable) -> Self {
        guard !isNone else { return self }
        return Self(operations: operations.map { $0.namespaced(by: namespace) })
    }
}

extension Effect.Operation {
    func namespaced(by namespace: AnyHashableSendable) -> Self {
        func scoped(_ id: AnyHashableSendable) -> AnyHashableSendable {
            AnyHashableSendable(ElementEffectID(element: namespace, id: id))
        }
        switch self {
        case .send, .run:
            return self
        case .cancellable(let effect, let id, let cancelInFlight):
            return .cancellable(effect.namespaced(by: namespace), id: scoped(id), cancelInFlight: cancelInFlight)
        case .cancel(let id):
            return .cancel(id: scoped(id))
        case .concatenate(let effects):
            return .concatenate(effects.map { $0.namespaced(by: namespace) })
        case .throttle(let effect, let id, let window, let latest):
            return .throttle(effect.namespaced(by: namespace), id: scoped(id), window: window, latest: latest)
        }
    }
}

/// The cancellation id of an effect of one element of a collection (``Reducer/forEach(_:action:element:)``):
/// the element reducer's id, under the element's.
///
/// Inside the element's reducer, ids are written as usual; from outside (the parent, or
/// ``Store/cancelEffects(id:)``), an element's effect is cancelled with this id.
///
/// ```swift
/// store.cancelEffects(id: ElementEffectID(element: todo.id, id: "timer"))
/// ```
public struct ElementEffectID: Hashable, Sendable {
    let element: AnyHashableSendable
    let id: AnyHashableSendable

    /// The id `id` of the effects of the element `element`.
    public init(element: some Hashable & Sendable, id: some Hashable & Sendable) {
        self.init(element: AnyHashableSendable(element), id: AnyHashableSendable(id))
    }

    init(element: AnyHashableSendable, id: AnyHashableSendable) {
        self.element = element
        self.id = id
    }
}
