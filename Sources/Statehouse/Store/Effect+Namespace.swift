extension Effect {
    /// The same effect with every cancellation id it uses (marks, cancels, throttles) put under `namespace`, so
    /// that two copies of one feature, each under its own namespace, do not cancel each other's effects.
    func namespaced(by namespace: AnyHashableSendable) -> Self {
        mappingIDs { AnyHashableSendable(ElementEffectID(element: namespace, id: $0)) }
    }

    /// The same effect with every cancellation id it uses (marks, cancels, throttles) replaced by `transform`'s.
    ///
    /// Every `scope` and `ifLet` a child's effect passes maps it: an effect with no id (`.send`, `.run`, the common
    /// case) is returned as it is, with no new array on the dispatch path.
    func mappingIDs(_ transform: (AnyHashableSendable) -> AnyHashableSendable) -> Self {
        guard hasIDs else { return self }
        return Self(operations: operations.map { $0.mappingIDs(transform) })
    }

    /// Whether any operation, at any depth, names a cancellation id.
    private var hasIDs: Bool {
        operations.contains { operation in
            switch operation {
            case .send, .run: false
            case .cancellable, .cancel, .throttle: true
            case .concatenate(let effects): effects.contains(where: \.hasIDs)
            }
        }
    }
}

extension Effect.Operation {
    func mappingIDs(_ transform: (AnyHashableSendable) -> AnyHashableSendable) -> Self {
        switch self {
        case .send, .run:
            return self
        case .cancellable(let effect, let id, let cancelInFlight):
            return .cancellable(effect.mappingIDs(transform), id: transform(id), cancelInFlight: cancelInFlight)
        case .cancel(let id):
            return .cancel(id: transform(id))
        case .concatenate(let effects):
            return .concatenate(effects.map { $0.mappingIDs(transform) })
        case .throttle(let effect, let id, let window, let latest):
            return .throttle(effect.mappingIDs(transform), id: transform(id), window: window, latest: latest)
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
