import Foundation
import Statehouse
import StatehouseSecure

/// A fresh directory under the temporary folder, removed with everything in it when the test lets go of it.
final class TemporaryDirectory: Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-secure-\(UUID().uuidString)")

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The file the encrypted storage keeps `key` in (it names files as the plain file storage does).
    func file(of key: String) -> URL {
        FileStorage(directory: url).fileURL(for: key)
    }

    /// The names in the directory, hidden ones included.
    var names: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
    }

    /// Whether any file in the directory or below contains `text` (as UTF-8), anywhere in its bytes.
    func anyFileContains(_ text: String) throws -> Bool {
        let files = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])?
            .compactMap { $0 as? URL } ?? []
        return try files.contains { file in
            try file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true
                && Data(contentsOf: file).range(of: Data(text.utf8)) != nil
        }
    }
}

/// A secret that must never show anywhere but in memory: unique, so that seeing it elsewhere means it leaked.
func uniqueSecret() -> String {
    "correct-horse-battery-staple-\(UUID().uuidString)"
}

extension Data {
    /// These bytes with the byte at `index` inverted.
    func flipping(at index: Int) -> Data {
        var copy = self
        copy[copy.startIndex + index] ^= 0xFF
        return copy
    }
}
