/// Prints rows of measurements as a Markdown table: the first column is Statehouse, every other column a baseline
/// with its ratio to Statehouse (`×3.0`: the baseline takes three times as long, or three times the memory).
struct Table {
    var title: String
    var columns: [String]
    var targetColumn = true
    private var lines: [String] = []

    init(title: String, columns: [String]) {
        self.title = title
        self.columns = columns
    }

    mutating func add(_ operation: String, unit: String, cells: [Cell?], target: String) {
        let ours = cells.first??.value
        let rendered = cells.enumerated().map { index, cell -> String in
            guard let cell else { return "—" }
            // A difference of two noisy measurements (the per-observer row) can come out below zero.
            guard cell.value >= 0 else { return "noise" }
            var text = format(cell.value, unit: unit)
            if !cell.note.isEmpty { text += " \(cell.note)" }
            if index > 0, let ours, ours > 0 { text += " (×\(format(cell.value / ours)))" }
            return text
        }
        lines.append("| \(operation) | " + rendered.joined(separator: " | ") + " | \(target) |")
    }

    func print() {
        Swift.print("\n### \(title)\n")
        Swift.print("| operation | " + columns.joined(separator: " | ") + " | target |")
        Swift.print("|---|" + String(repeating: "---:|", count: columns.count) + "---|")
        for line in lines { Swift.print(line) }
    }
}

func format(_ value: Double, unit: String = "") -> String {
    let number: String
    switch abs(value) {
    case 100...: number = String(Int(value.rounded()))
    case 10..<100: number = String(Double(Int((value * 10).rounded())) / 10)
    default: number = String(Double(Int((value * 100).rounded())) / 100)
    }
    return unit.isEmpty ? number : "\(number) \(unit)"
}
