import Foundation
import Statehouse
import Testing

extension StorageConformance.Check {
    /// For a `ChangeDetectingStorage`: the fingerprint one instance reads changes with every save of other bytes and
    /// every removal another instance makes (saves in quick succession included), stays the same while nothing
    /// changes (other keys' saves included), is `.absent` when nothing is stored, and
    /// `saveReturningFingerprint` returns what `fingerprint(key:)` then reads. Persisted containers rely on all of it
    /// to follow other processes' changes and to tell them from their own.
    public static let fingerprints = Self(
        id: "fingerprints",
        name: "fingerprints: change with every change by another instance, and only then"
    ) { subject in
        let writer = try subject.instance()
        let watcher = try subject.instance()
        let key = "conformance.watched"
        let saving = try subject.changeDetecting(writer)
        let watching = try subject.changeDetecting(watcher)
        let seen = { try watcher.attempt("fingerprint", key: key) { try watching.fingerprint(key: key) } }
        let expect = { (condition: Bool, message: String) in
            #expect(condition, Comment(rawValue: message), sourceLocation: subject.sourceLocation)
        }

        expect(try seen() == .absent, "The fingerprint of a key never saved is not StorageFingerprint.absent.")
        let returned = try writer.attempt("saveReturningFingerprint", key: key) {
            try saving.saveReturningFingerprint(Data("first".utf8), key: key)
        }
        let read = try writer.attempt("fingerprint", key: key) { try saving.fingerprint(key: key) }
        expect(
            returned == read, "saveReturningFingerprint returned another fingerprint than fingerprint(key:) then read.")

        var last = try seen()
        expect(last != .absent, "After another instance saved the key, its fingerprint is still .absent.")
        try writer.save(Data("neighbour".utf8), key + ".neighbour")
        for _ in 0..<3 {
            expect(try seen() == last, "The fingerprint changed with no save or removal of the key.")
        }
        for round in 0..<20 {
            // Same-sized values in quick succession: a fingerprint of size and coarse time would repeat.
            try writer.save(Data("round \(round % 10)".utf8), key)
            let now = try seen()
            try subject.require(
                now != last, "Save \(round + 1) of 20 in quick succession left the fingerprint unchanged.")
            last = now
        }
        try writer.remove(key)
        expect(try seen() == .absent, "After another instance removed the key, its fingerprint is not .absent.")
        try watcher.save(Data("back".utf8), key)
        expect(
            try writer.attempt("fingerprint", key: key) { try saving.fingerprint(key: key) } != .absent,
            "After another instance saved the key again, its fingerprint is still .absent."
        )
    }
}
