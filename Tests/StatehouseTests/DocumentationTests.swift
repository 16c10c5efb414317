import Foundation
import Statehouse
import Testing

/// Every `swift` code block of the DocC articles must appear, line for line (indentation aside), in a file of
/// `Tests/StatehouseTests/DocExamples`, where it is compiled; and the examples there run.
@Suite("Documentation")
struct DocumentationTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func lines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    static func codeBlocks(in markdown: String) -> [String] {
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

    static func articles() throws -> [URL] {
        let catalog = repository.appendingPathComponent("Sources/Statehouse/Statehouse.docc")
        return try FileManager.default.contentsOfDirectory(at: catalog, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "md" }
    }

    @Test func everyArticleCodeBlockIsCompiledByTheTestSuite() throws {
        let examplesFolder = Self.repository.appendingPathComponent("Tests/StatehouseTests/DocExamples")
        let examples = try FileManager.default.contentsOfDirectory(at: examplesFolder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
            .map { Self.lines(try String(contentsOf: $0, encoding: .utf8)).joined(separator: "\n") }
            .joined(separator: "\n")
        let articles = try Self.articles()
        #expect(articles.count >= 7)
        var blocks = 0
        for article in articles {
            for block in Self.codeBlocks(in: try String(contentsOf: article, encoding: .utf8)) {
                blocks += 1
                let normalized = Self.lines(block).joined(separator: "\n")
                #expect(examples.contains(normalized), "\(article.lastPathComponent): a code block is not in DocExamples:\n\(block)")
            }
        }
        #expect(blocks >= 21)
    }

    @Test func examplesRun() async {
        ArticleExamples.overview()
        ArticleExamples.containers()
        await ArticleExamples.listeners()
        ArticleExamples.listenable()
        ArticleExamples.store()
        ArticleExamples.composingReducers()
        ArticleExamples.dependencies()
        let directory = TemporaryDirectory()
        #expect(throws: Never.self) { try ArticleExamples.persistence(directory: directory.url) }
        #expect(ArticleExamples.loadingState() == .failed(.offline, ["Swift", "Statehouse"]))
    }
}
