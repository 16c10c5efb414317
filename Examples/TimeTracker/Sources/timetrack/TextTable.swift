import Foundation

/// Rows of cells in columns as wide as their widest cell, two spaces apart, with a header row.
enum TextTable {
    static func text(header: [String], rows: [[String]]) -> String {
        let widths = (0..<header.count).map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        return ([header] + rows).map { row in
            zip(row, widths).map { cell, width in cell.padding(toLength: width, withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces) + "\n"
        }.joined()
    }
}
