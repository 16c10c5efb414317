/// One changed path between two trees: its value before (`nil`: it was added) and after (`nil`: it was removed).
public struct TreeChange: Sendable, Hashable, Encodable {
    /// A step into a tree: a member of an object, or an element of an array.
    public enum Step: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    public let path: [Step]
    public let old: JSONTree?
    public let new: JSONTree?

    /// The path as the page shows it: `todos[2].title`; `(state)` for the whole value.
    public var pathText: String {
        var text = ""
        for step in path {
            switch step {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text.isEmpty ? "(state)" : text
    }

    private enum CodingKeys: String, CodingKey {
        case path, steps, old, new
    }

    public init(path: [Step], old: JSONTree?, new: JSONTree?) {
        self.path = path
        self.old = old
        self.new = new
    }

    /// `{"path": "todos[2].title", "steps": ["todos", 2, "title"], "old": …, "new": …}`, `old` or `new` left out for
    /// an addition or a removal: the text for people, the steps for the page's script, which applies the change.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pathText, forKey: .path)
        try container.encode(path.map { step -> JSONTree in
            switch step {
            case .key(let key): .string(key)
            case .index(let index): .number(Double(index))
            }
        }, forKey: .steps)
        try container.encodeIfPresent(old, forKey: .old)
        try container.encodeIfPresent(new, forKey: .new)
    }
}
