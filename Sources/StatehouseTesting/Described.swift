import CustomDump

/// A value in a failure message, written by swift-custom-dump as code: `Counter.Action.rename("x")`, a state one
/// property per line, a set sorted. TCA's users read the same; `dump`'s `Module.(unknown context at $…)` is noise.
@usableFromInline
func described(_ value: Any) -> String {
    let dumped = String(customDumping: value)
    // custom-dump writes a case without payload with `description`: `Action.the go button` for an action whose
    // enum is `CustomStringConvertible`. The runtime knows the case's name; an action is such a case often enough
    // to write it right (a case nested in another's payload is still written custom-dump's way).
    guard let spoken = value as? any CustomStringConvertible, Mirror(reflecting: value).displayStyle == .enum,
        Mirror(reflecting: value).children.isEmpty, dumped.hasSuffix("." + spoken.description),
        let name = enumCaseName(value)
    else { return dumped }
    return dumped.dropLast(spoken.description.count) + name
}

private func enumCaseName(_ value: Any) -> String? {
    func open<T>(_ value: T) -> String? {
        swiftEnumCaseName(value).map { String(cString: $0) }
    }
    return _openExistential(value, do: open)
}

/// The Swift runtime's name of an enum value's case: what `print` shows for an enum without a `description`. Its
/// symbol has been stable since Swift 5's ABI; `Mirror` offers no way to the name of a case without payload.
@_silgen_name("swift_EnumCaseName")
private func swiftEnumCaseName<T>(_ value: T) -> UnsafePointer<CChar>?
