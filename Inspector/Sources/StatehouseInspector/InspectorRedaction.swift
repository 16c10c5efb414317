/// Which members of a store's state and actions never reach the inspector's page: their values are replaced by
/// ``InspectorRedaction/placeholder`` before anything is kept, diffed or sent.
///
/// ```swift
/// inspector.attach(store, name: "account", redacting: .fields("password", "token"))
/// ```
///
/// A member is named as it is encoded (its `CodingKey`), at any depth, ignoring case. A change of a redacted member
/// shows in no diff: both sides are the placeholder. For a value that has no members to name (a store whose state or
/// actions are not `Encodable`, a container), the `ValueRedaction` of StatehouseMetrics and StatehouseLogging says what
/// shows.
public struct InspectorRedaction: Sendable, Hashable {
    /// What a redacted value shows as.
    public static let placeholder = JSONTree.string("‹redacted›")

    let fieldNames: Set<String>

    /// Redacts nothing.
    public static let none = InspectorRedaction(fieldNames: [])

    /// Redacts the members of these names, at any depth, ignoring case.
    public static func fields(_ names: String...) -> InspectorRedaction {
        fields(Set(names))
    }

    /// Redacts the members of these names, at any depth, ignoring case.
    public static func fields(_ names: Set<String>) -> InspectorRedaction {
        InspectorRedaction(fieldNames: Set(names.map { $0.lowercased() }))
    }

    /// `tree` with the value of every redacted member replaced by the placeholder.
    func apply(to tree: JSONTree) -> JSONTree {
        guard !fieldNames.isEmpty else { return tree }
        switch tree {
        case .object(let members):
            return .object(Dictionary(uniqueKeysWithValues: members.map { key, value in
                (key, fieldNames.contains(key.lowercased()) ? Self.placeholder : apply(to: value))
            }))
        case .array(let elements):
            return .array(elements.map(apply(to:)))
        case .null, .bool, .number, .string:
            return tree
        }
    }
}
