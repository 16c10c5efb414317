import Foundation

/// The `swift` code blocks of DocC articles, for the tests that compile and run them.
public enum ArticleCode {
    /// The `swift` code blocks of `markdown`, in order.
    public static func blocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" {
                current = []
            } else if let block = current, trimmed == "```" {
                blocks.append(block.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// `code` with its lines trimmed and the empty ones left out, so that a block indented differently in a test
    /// file still matches.
    public static func normalized(_ code: some StringProtocol) -> String {
        code.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: "\n")
    }
}
