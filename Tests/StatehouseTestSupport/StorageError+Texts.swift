import Statehouse

extension StorageError {
    /// Every text of this error someone may log: its description, reflection and dump, its message, and its
    /// cause's description and reflection. A secret must appear in none of them.
    public var everyText: [String] {
        var dumped = ""
        dump(self, to: &dumped)
        return [
            "\(self)", String(reflecting: self), dumped, message,
            cause.map { String(describing: $0) } ?? "", cause.map { String(reflecting: $0) } ?? "",
        ]
    }
}
