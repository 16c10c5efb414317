/// A rename, as a change that undo takes back exactly: the name, and every name key it moved. In a database from
/// before the Unicode comparison, two projects can share a name ignoring case, the newer with a marked key
/// (``TrackerDatabase/collisionMark``); renaming the older passes its key on to the newer, and undoing it must give
/// both keys back, or the older could never have its name again.
extension TrackerDatabase {
    /// The change that names `project` `name`.
    /// - Throws: ``TrackerError/duplicateName(existing:)`` when another project has the name ignoring case, one whose
    ///   name collided with it included.
    static func renaming(_ project: TrackerChange.Project, to name: ProjectName, in sql: any SQLStatements) throws -> TrackerChange {
        if let existing = try sql.value(
            """
            SELECT name FROM project WHERE id <> ?
            AND (nameKey = ? OR (nameKey\(sql.binaryCollation) >= ? AND nameKey\(sql.binaryCollation) < ?))
            ORDER BY id LIMIT 1
            """,
            [.integer(project.id), .text(name.key), .text(name.key + "\u{1}"), .text(name.key + "\u{2}")]
        )?.text {
            throw TrackerError.duplicateName(existing: existing)
        }
        let oldKey = try nameKey(of: project.id, in: sql)
        var keys: [TrackerChange.KeyChange] = []
        if oldKey != name.key {
            keys.append(.init(id: project.id, from: oldKey, to: name.key))
            if let heir = try heir(ofNameKey: oldKey, in: sql) {
                keys.append(.init(id: heir, from: try nameKey(of: heir, in: sql), to: oldKey))
            }
        }
        return .projectRenamed(id: project.id, from: project.name, to: name.display, keys: keys)
    }

    /// Names the project `id` `to`, and moves `keys`, if the name and the keys are still `from`.
    static func applyRename(
        _ id: Int64, from: String, to: String, keys: [TrackerChange.KeyChange], in sql: any SQLStatements
    ) throws {
        guard try project(id, in: sql)?.name == from,
              try keys.allSatisfy({ try nameKey(of: $0.id, in: sql) == $0.from })
        else { throw changedSince(from) }
        let moving = Set(keys.map(\.id))
        for key in keys {
            let holders = try sql.rows("SELECT id, name FROM project WHERE nameKey = ?", [.text(key.to)])
            if let holder = holders.first, let holderID = holder[0].integer, !moving.contains(holderID) {
                throw TrackerError.duplicateName(existing: holder[1].text ?? "")
            }
        }
        // Keys are unique at every statement: each moves out of the way first, to a key no name has.
        for key in keys {
            try sql.execute("UPDATE project SET nameKey = ? WHERE id = ?", [.text("\u{1}\(key.id)"), .integer(key.id)])
        }
        for key in keys {
            try sql.execute("UPDATE project SET nameKey = ? WHERE id = ?", [.text(key.to), .integer(key.id)])
        }
        try sql.execute("UPDATE project SET name = ? WHERE id = ?", [.text(to), .integer(id)])
    }

    private static func nameKey(of id: Int64, in sql: any SQLStatements) throws -> String {
        try sql.value("SELECT nameKey FROM project WHERE id = ?", [.integer(id)])?.text ?? ""
    }
}
