import Foundation

/// Writes values the way a person writes them in Swift: `.rename("x")`, `Counter(count: 1, name: "")`, `[1, 2]`.
///
/// Failure messages name actions and show state diffs; `dump`'s output (`- Module.(unknown context at $…).Action.b2`)
/// is noise there. Built on `Mirror`, so it needs nothing from the types it describes.
@usableFromInline
enum ValueDescription {
    /// `value` on one line, for actions in messages.
    @usableFromInline
    static func line(_ value: Any) -> String {
        render(value, indent: nil)
    }

    /// `value` over several lines (one stored property or element per line once a line gets long), for diffs.
    static func lines(_ value: Any) -> String {
        render(value, indent: "")
    }

    /// The name of the case `value` is, whatever its `description` says.
    private static func caseName(_ value: Any) -> String {
        func open<T>(_ value: T) -> String? {
            swiftEnumCaseName(value).map { String(cString: $0) }
        }
        return _openExistential(value, do: open) ?? String(describing: value)
    }

    /// Longer than this, a composite value breaks its children onto lines of their own.
    private static let lineWidth = 60

    private static func render(_ value: Any, indent: String?) -> String {
        if let leaf = leafDescription(value) { return leaf }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first?.value else { return "nil" }
            return render(wrapped, indent: indent)
        case .enum:
            return enumCase(value, mirror: mirror, indent: indent)
        case .tuple:
            return composite(open: "(", close: ")", parts: labelled(mirror.children), indent: indent)
        case .collection:
            return composite(open: "[", close: "]", parts: mirror.children.map { (nil, $0.value) }, indent: indent)
        case .set:
            return composite(open: "[", close: "]", parts: sortedByDescription(mirror.children.map(\.value)), indent: indent)
        case .dictionary:
            return dictionary(mirror, indent: indent)
        case .struct, .class:
            return composite(open: "\(typeName(value))(", close: ")", parts: labelled(mirror.children), indent: indent)
        default:
            return String(describing: value)
        }
    }

    /// Values that read best as their own description: strings quoted, numbers, booleans, and Foundation values.
    private static func leafDescription(_ value: Any) -> String? {
        switch value {
        case let string as String: string.debugDescription
        case let character as Character: String(character).debugDescription
        case let substring as Substring: String(substring).debugDescription
        case is any Numeric, is Bool, is UUID, is Date, is URL, is any Error:
            String(describing: value)
        default:
            nil
        }
    }

    /// `.name` or `.name(payload)`. A case without payload has no children: its name comes from the runtime, as
    /// `String(describing:)` would give it were the enum not `CustomStringConvertible`.
    private static func enumCase(_ value: Any, mirror: Mirror, indent: String?) -> String {
        guard let payload = mirror.children.first, let name = payload.label else {
            return ".\(caseName(value))"
        }
        let payloadMirror = Mirror(reflecting: payload.value)
        let parts =
            payloadMirror.displayStyle == .tuple ? labelled(payloadMirror.children) : [(nil, payload.value)]
        return composite(open: ".\(name)(", close: ")", parts: parts, indent: indent)
    }

    private static func dictionary(_ mirror: Mirror, indent: String?) -> String {
        let pairs = mirror.children.map { child -> (String, String) in
            let pair = Array(Mirror(reflecting: child.value).children)
            guard pair.count == 2 else { return (line(child.value), "") }
            return (line(pair[0].value), render(pair[1].value, indent: indent.map { $0 + "  " }))
        }
        guard !pairs.isEmpty else { return "[:]" }
        let sorted = pairs.sorted { $0.0 < $1.0 }
        let inline = "[" + sorted.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + "]"
        guard let indent, inline.count > lineWidth || inline.contains("\n") else { return inline }
        return "[\n" + sorted.map { "\(indent)  \($0.0): \($0.1)" }.joined(separator: ",\n") + "\n\(indent)]"
    }

    private static func composite(open: String, close: String, parts: [(String?, Any)], indent: String?) -> String {
        let rendered = parts.map { label, value in
            (label, render(value, indent: indent.map { $0 + "  " }))
        }
        func part(_ label: String?, _ text: String) -> String {
            label.map { "\($0): \(text)" } ?? text
        }
        let inline = open + rendered.map(part).joined(separator: ", ") + close
        guard let indent, !rendered.isEmpty, inline.count > lineWidth || inline.contains("\n") else { return inline }
        return open + "\n" + rendered.map { "\(indent)  \(part($0, $1))" }.joined(separator: ",\n") + "\n\(indent)" + close
    }

    /// Children with their labels; tuple elements without labels come as `.0`, `.1`, which are dropped.
    private static func labelled(_ children: Mirror.Children) -> [(String?, Any)] {
        children.map { child in
            let label = child.label.flatMap { $0.hasPrefix(".") ? nil : $0 }
            return (label, child.value)
        }
    }

    /// A set's elements in a stable order, so that equal sets describe the same.
    private static func sortedByDescription(_ elements: [Any]) -> [(String?, Any)] {
        elements.map { (line($0), $0) }.sorted { $0.0 < $1.0 }.map { (nil, $0.1) }
    }

    /// The type's name as written in code: `Counter`, `Array<Int>`; without module or context.
    private static func typeName(_ value: Any) -> String {
        String(describing: type(of: value))
    }
}

/// The Swift runtime's name of an enum value's case: what `print` shows for an enum without a `description`. Its
/// symbol has been stable since Swift 5's ABI; `Mirror` offers no way to the name of a case without payload.
@_silgen_name("swift_EnumCaseName")
private func swiftEnumCaseName<T>(_ value: T) -> UnsafePointer<CChar>?
