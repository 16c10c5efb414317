import Foundation
import Statehouse
import StatehouseTestSupport
import Testing

/// Every `swift` code block of the DocC articles must appear, line for line (indentation aside), in a file of
/// `Tests/StatehouseTests/DocExamples`, where it is compiled; and the examples there run.
@Suite("Documentation")
struct DocumentationTests {
    /// This file is `Tests/StatehouseTests/DocExamples/DocumentationTests.swift`.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func articles() throws -> [URL] {
        let catalog = repository.appendingPathComponent("Sources/Statehouse/Statehouse.docc")
        return try FileManager.default.contentsOfDirectory(at: catalog, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "md" }
    }

    @Test func everyArticleCodeBlockIsCompiledByTheTestSuite() throws {
        let examplesFolder = Self.repository.appendingPathComponent("Tests/StatehouseTests/DocExamples")
        let examples = try FileManager.default.contentsOfDirectory(at: examplesFolder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
            .map { ArticleCode.normalized(try String(contentsOf: $0, encoding: .utf8)) }
            .joined(separator: "\n")
        let articles = try Self.articles()
        #expect(articles.count >= 7)
        var blocks = 0
        for article in articles {
            for block in ArticleCode.blocks(in: try String(contentsOf: article, encoding: .utf8)) {
                blocks += 1
                let normalized = ArticleCode.normalized(block)
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
        #expect(ArticleExamples.undo() == [["Reading"], []])
        let folder = TemporaryDirectory()
        #expect(ArticleExamples.persistedUndo(in: folder.url) == [["Writing", "Reading"]])
        ArticleExamples.dependencies()
        let directory = TemporaryDirectory()
        #expect(throws: Never.self) { try ArticleExamples.persistence(directory: directory.url) }
        #expect(ArticleExamples.loadingState() == .failed(.offline, ["Swift", "Statehouse"]))
    }
}
