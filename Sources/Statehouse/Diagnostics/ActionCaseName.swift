/// The name of `action`'s enum case, without its payload; the name of its type if it is not an enum. What the
/// logging and metrics middleware show of an action that their `ValueRedaction` keeps out.
///
/// `Mirror` names a case that has a payload, and only such a case. A case without one is named by its description:
/// that is its name unless the type customizes `description`, and there is no payload it could show.
package func actionCaseName(_ action: Any) -> String {
    let mirror = Mirror(reflecting: action)
    guard mirror.displayStyle == .enum else { return String(describing: type(of: action)) }
    return mirror.children.first?.label ?? String(describing: action)
}
