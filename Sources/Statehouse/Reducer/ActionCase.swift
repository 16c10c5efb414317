/// One case of an action enum that carries a child's action: how to wrap a child action in it, and how to find the
/// child action in a parent's.
///
/// ```swift
/// enum AppAction: Sendable { case settings(SettingsAction), reset }
/// let settings = ActionCase(AppAction.settings)             // found by reflection
/// let explicit = ActionCase(embed: AppAction.settings) {    // or spelled out, for hot paths
///     if case .settings(let action) = $0 { action } else { nil }
/// }
/// ```
public struct ActionCase<Parent: Sendable, Child: Sendable>: Sendable {
    /// Wraps a child action in the parent's case.
    public let embed: @Sendable (Child) -> Parent
    /// The child action in `parent`, if `parent` is this case.
    public let extract: @Sendable (Parent) -> Child?

    /// A case with both directions spelled out.
    public init(embed: @escaping @Sendable (Child) -> Parent, extract: @escaping @Sendable (Parent) -> Child?) {
        self.embed = embed
        self.extract = extract
    }

    /// A case given by its constructor, `AppAction.settings`; the other direction is found with `Mirror`.
    ///
    /// A parent action is this case when its payload is a `Child` and wrapping that payload again gives the same
    /// case, labels included (so two cases with the same payload type, or the same base name, are told apart). Reflection costs a few microseconds per
    /// action; a reducer on a hot path can spell `extract` out with ``init(embed:extract:)``.
    public init(_ embed: @escaping @Sendable (Child) -> Parent) {
        self.init(embed: embed) { parent in
            guard let found = CaseReflection.payload(of: parent),
                let child = found.payload as? Child,
                CaseReflection.payload(of: embed(child))?.signature == found.signature
            else { return nil }
            return child
        }
    }
}

/// The case and payload of an enum value, by reflection.
enum CaseReflection {
    /// What tells a case from the others: its base name and its payload's labels (`load(id:)` and `load(name:)`
    /// share a base name, which is all `Mirror` gives).
    struct Signature: Equatable {
        let name: String
        let labels: [String?]
    }

    /// The case of `value` and its payload; a payload of one labelled value (`case child(action: ChildAction)`),
    /// which `Mirror` shows as a one-element tuple, is unwrapped.
    static func payload(of value: Any) -> (signature: Signature, payload: Any)? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .enum, let child = mirror.children.first, let name = child.label else {
            return nil
        }
        let payload = Mirror(reflecting: child.value)
        guard payload.displayStyle == .tuple else { return (Signature(name: name, labels: []), child.value) }
        let elements = Array(payload.children)
        let labels = elements.map { $0.label.flatMap { $0.hasPrefix(".") ? nil : $0 } }
        let signature = Signature(name: name, labels: labels)
        return (signature, elements.count == 1 ? elements[0].value : child.value)
    }
}
