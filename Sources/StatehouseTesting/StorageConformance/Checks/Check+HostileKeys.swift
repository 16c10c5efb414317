import Foundation
import Statehouse
import Testing

extension StorageConformance.Check {
    /// Keys a storage could mistake for paths, truncate, fold or mangle keep their own data: none collides with
    /// another, none escapes the place's directory, removing one leaves the others. Keys Swift calls equal (`"café"`
    /// precomposed and decomposed) are one key; keys that differ in case only are two.
    public static let hostileKeys = Self(
        id: "hostileKeys", name: "hostile keys: paths, empty, NUL, long, Unicode and case never collide or escape"
    ) { subject in
        let storage = try subject.instance()
        let keys = HostileKeys.all
        let value = { (index: Int) in Data("value \(index)".utf8) }
        for (index, key) in keys.enumerated() {
            try storage.save(value(index), key)
        }
        let other = try subject.instance()
        var intact = true
        for instance in [storage, other] {
            for (index, key) in keys.enumerated() {
                let loaded = try instance.load(key)
                guard loaded != value(index) else { continue }
                intact = false
                let owner = keys.indices.first { value($0) == loaded }
                subject.fail(
                    owner.map {
                        "\(describe(key: key)) loaded the value saved under \(describe(key: keys[$0])): they collide."
                    }
                        ?? "\(describe(key: key)) loaded \(describe(loaded)), not what was saved under it."
                )
            }
        }
        // Removals among keys that collide would only fail again.
        guard intact else { throw CheckStopped() }
        let stray = subject.strayEntries()
        #expect(
            stray.isEmpty, "Keys escaped the storage's directory: \(stray).", sourceLocation: subject.sourceLocation)

        let removed: Set = ["..", "", "/", "a\0b"]
        for key in removed {
            try storage.remove(key)
        }
        for (index, key) in keys.enumerated() {
            let expected = removed.contains(key) ? nil : value(index)
            try subject.expect(
                other, loads: expected, for: key,
                "After removing \(removed.map { describe(key: $0) }.sorted().joined(separator: ", ")), a key is wrong."
            )
        }
        try checkCanonicalEquivalence(storage, subject)
    }

    /// `"café"` typed precomposed or decomposed is one `String` to Swift, so one key to a storage.
    private static func checkCanonicalEquivalence(_ storage: StorageProbe, _ subject: ConformanceSubject) throws {
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        try storage.save(Data("saved precomposed".utf8), precomposed)
        try subject.expect(
            storage, loads: Data("saved precomposed".utf8), for: decomposed,
            "\"café\" saved precomposed (U+00E9) does not load decomposed (e + U+0301); Swift calls the keys equal."
        )
        try storage.save(Data("saved decomposed".utf8), decomposed)
        try subject.expect(
            storage, loads: Data("saved decomposed".utf8), for: precomposed,
            "\"café\" saved decomposed did not replace the precomposed key's value; Swift calls the keys equal."
        )
        try storage.remove(decomposed)
        try subject.expect(
            storage, loads: nil, for: precomposed,
            "\"café\" removed decomposed still loads precomposed; Swift calls the keys equal."
        )
    }
}

/// Keys that storages get wrong, no two of them equal as Swift compares strings.
enum HostileKeys {
    static let all: [String] = paths + emptyAndControl + encodingLookalikes + long + unicodeAndCase

    /// Path syntax: a file storage must encode these, never follow them.
    static let paths = [
        "../../etc/passwd", "../escaped", "/", "/absolute", "a/b", "a\\b", ".", "..", "...", "~", ".hidden",
    ]
    /// What C strings and trimming lose.
    static let emptyAndControl = ["", " ", "\0", "a", "a\0b", "a\0c", "\n", "tab\t"]
    /// Keys that look like another key's encoding, or like a storage's own files.
    static let encodingLookalikes = ["%", "%2E", "%2e", "name.state", "name.state.tmp", "CON", "nul", "*?<>|:\""]
    /// Longer than any file name; pairs that differ only at the end, where truncation would cut.
    static let long = [
        String(repeating: "k", count: 1_000), String(repeating: "k", count: 999) + "j",
        String(repeating: "🙂", count: 300), String(repeating: "🙂", count: 299) + "🙃",
    ]
    /// Case and compatibility forms Swift keeps apart, which case-insensitive or NFKC folding would merge.
    static let unicodeAndCase = ["日本語", "Theme", "theme", "THEME", "ﬁle", "file", "straße", "strasse"]
}
