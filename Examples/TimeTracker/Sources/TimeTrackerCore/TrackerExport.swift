import Foundation

/// The export formats `timetrack export` writes and `timetrack import` reads: JSON lines, one ``ExportRow`` object a
/// line; or CSV, `project,created,startedAt,stoppedAt` under a header, fields quoted as RFC 4180 says. Times are
/// ISO 8601 in UTC to the microsecond: an exported file imported and exported again gives the same bytes, and an
/// activity of less than a millisecond keeps a stop after its start.
public enum TrackerExport {
    public static func jsonLines(_ rows: [ExportRow]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return rows.map { row in
            let line = Line(
                project: row.project, created: row.created.map(time), startedAt: row.startedAt.map(time),
                stoppedAt: row.stoppedAt.map(time)
            )
            // Strings and optional strings always encode.
            return String(decoding: (try? encoder.encode(line)) ?? Data(), as: UTF8.self) + "\n"
        }.joined()
    }

    public static func csv(_ rows: [ExportRow]) -> String {
        "project,created,startedAt,stoppedAt\n" + rows.map { row in
            [csvField(row.project)] + [row.created, row.startedAt, row.stoppedAt].map { $0.map(time) ?? "" }
        }.map { $0.joined(separator: ",") + "\n" }.joined()
    }

    /// Reads either format: a file whose first line begins with `{` is JSON lines.
    /// - Throws: ``TrackerError/importRefused(line:reason:)`` for the first line that is not a row.
    public static func rows(from text: String) throws(TrackerError) -> [ExportRow] {
        // "\r\n" is one Character in Swift: a file written on Windows splits on it too.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        // An empty tracker's export is empty: nothing to import.
        guard lines.contains(where: { !$0.isEmpty }) else { return [] }
        let isJSON = lines.first { !$0.isEmpty }?.hasPrefix("{") ?? false
        if !isJSON, lines.first.map(String.init) != "project,created,startedAt,stoppedAt" {
            throw .importRefused(line: 1, reason: "a CSV export begins with the line project,created,startedAt,stoppedAt.")
        }
        var rows: [ExportRow] = []
        for (index, line) in lines.enumerated() where !line.isEmpty && (isJSON || index > 0) {
            do {
                rows.append(try isJSON ? jsonRow(line, number: index + 1) : csvRow(line, number: index + 1))
            } catch {
                throw .importRefused(line: index + 1, reason: String(describing: error))
            }
        }
        return rows
    }

    private struct Line: Codable {
        var project: String
        var created: String?
        var startedAt: String?
        var stoppedAt: String?
    }

    private struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    private static func jsonRow(_ line: Substring, number: Int) throws -> ExportRow {
        guard let decoded = try? JSONDecoder().decode(Line.self, from: Data(line.utf8)) else {
            throw Unreadable(description: #"not an object such as {"project": "Writing", "startedAt": "…"}."#)
        }
        return try row(decoded, number: number)
    }

    private static func csvRow(_ line: Substring, number: Int) throws -> ExportRow {
        let fields = try csvFields(line)
        guard fields.count == 4 else { throw Unreadable(description: "a row has 4 fields, this one \(fields.count).") }
        let optional = { (field: String) in field.isEmpty ? nil : field }
        return try row(
            Line(project: fields[0], created: optional(fields[1]), startedAt: optional(fields[2]), stoppedAt: optional(fields[3])),
            number: number
        )
    }

    private static func row(_ line: Line, number: Int) throws -> ExportRow {
        func seconds(_ text: String?) throws -> Double? {
            guard let text else { return nil }
            guard let seconds = Self.seconds(text) else {
                throw Unreadable(description: "\"\(text)\" is not a time such as 2026-11-28T09:00:00.000000Z.")
            }
            return seconds
        }
        let row = ExportRow(
            line: number, project: line.project, created: try seconds(line.created), startedAt: try seconds(line.startedAt),
            stoppedAt: try seconds(line.stoppedAt)
        )
        guard row.startedAt != nil || row.stoppedAt == nil else {
            throw Unreadable(description: "an activity's row has a startedAt.")
        }
        return row
    }

    /// The fields of one CSV record (names hold no line breaks, so a record is a line).
    private static func csvFields(_ line: Substring) throws -> [String] {
        var fields: [String] = [], field = "", quoted = false, index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            if quoted {
                if character == "\"" {
                    let next = line.index(after: index)
                    if next < line.endIndex, line[next] == "\"" {
                        field.append("\"")
                        index = next
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"", field.isEmpty {
                quoted = true
            } else if character == "," {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
            index = line.index(after: index)
        }
        guard !quoted else { throw Unreadable(description: "a quoted field does not end.") }
        return fields + [field]
    }

    private static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The fraction is written here, rounded to the microsecond: a formatter truncates to the millisecond, and a
    /// time read back from `.124` may be 0.12399999… in binary, which it would write as `.123`.
    private static func time(_ seconds: Double) -> String {
        // Far outside any tracker's times (another program's write): clamped rather than trap.
        let microseconds = Int64((min(max(seconds, -1e11), 1e11) * 1_000_000).rounded())
        let wholeSeconds = Int64((Double(microseconds) / 1_000_000).rounded(.down))
        let fraction = String(microseconds - wholeSeconds * 1_000_000)
        let text = Date(timeIntervalSince1970: Double(wholeSeconds)).formatted(Date.ISO8601FormatStyle())
        return text.dropLast() + "." + String(repeating: "0", count: 6 - fraction.count) + fraction + "Z"
    }

    /// An ISO 8601 time with any fraction of a second and `Z` or an offset; `nil` for anything else, a day that does
    /// not exist (`2026-02-30`) included: a time in `Z` must read back as it was written.
    private static func seconds(_ text: String) -> Double? {
        var whole = text, fraction = 0.0
        if let dot = text.firstIndex(of: ".") {
            let digits = text[text.index(after: dot)...].prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let value = Double("0." + digits) else { return nil }
            fraction = value
            whole = String(text[..<dot]) + text[text.index(after: dot)...].dropFirst(digits.count)
        }
        let style = Date.ISO8601FormatStyle()
        guard let date = try? style.parse(whole) else { return nil }
        if whole.hasSuffix("Z"), date.formatted(style) != whole { return nil }
        return date.timeIntervalSince1970 + fraction
    }
}
