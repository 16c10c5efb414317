import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("File storage keys: keys Swift calls equal share a file, keys differing in case do not", .serialized)
struct FileStorageKeyTests {
    /// "café" precomposed and decomposed are one `String` to Swift: a file storage gives them one file.
    @Test(arguments: [("caf\u{E9}", "cafe\u{301}"), ("cafe\u{301}", "caf\u{E9}")])
    func keysSwiftCallsEqualShareTheirData(saved: String, loaded: String) throws {
        #expect(saved == loaded)
        let directory = TemporaryDirectory()
        let storage = FileStorage(directory: directory.url)
        try storage.save(Data("kept".utf8), key: saved)
        #expect(try storage.load(key: loaded) == Data("kept".utf8))
    }

    /// A container finds what a container with the other spelling of its (equal) key saved.
    @Test(arguments: [("caf\u{E9}", "cafe\u{301}"), ("cafe\u{301}", "caf\u{E9}")])
    func aContainerLoadsWhatAContainerWithTheOtherSpellingSaved(saved: String, loaded: String) throws {
        let directory = TemporaryDirectory()
        do {
            let writer = StateContainer(
                0, key: "key.\(saved)", storage: .file(directory: directory.url), externalChanges: .ignore
            )
            writer.modify(42)
            try writer.flush()
        }
        let reader = StateContainer(
            0, key: "key.\(loaded)", storage: .file(directory: directory.url), externalChanges: .ignore
        )
        #expect(reader.value == 42)
    }

    /// Keys that differ only in case get file names that differ ignoring case too: two files on a case-insensitive
    /// volume (macOS's default).
    @Test func keysDifferingOnlyInCaseGetFileNamesThatDifferIgnoringCase() throws {
        let directory = TemporaryDirectory()
        let storage = FileStorage(directory: directory.url)
        let upper = storage.fileURL(for: "Theme").lastPathComponent
        let lower = storage.fileURL(for: "theme").lastPathComponent
        #expect(upper.lowercased() != lower.lowercased(), "\(upper) and \(lower) are one file where case is folded")
        try storage.save(Data("upper".utf8), key: "Theme")
        try storage.save(Data("lower".utf8), key: "theme")
        #expect(try storage.load(key: "Theme") == Data("upper".utf8))
        #expect(try storage.load(key: "theme") == Data("lower".utf8))
    }
}
