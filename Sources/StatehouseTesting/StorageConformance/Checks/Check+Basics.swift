import Foundation
import Statehouse

extension StorageConformance.Check {
    /// Saved data loads back byte for byte, from the instance that saved it and from another: empty data (which is
    /// not "nothing"), 1 MiB, and every byte value, invalid UTF-8 and NULs included.
    public static let roundTrip = Self(
        id: "roundTrip", name: "round trip: empty, 1 MiB and binary data load back byte for byte"
    ) { subject in
        let storage = try subject.instance()
        let samples = [
            ("conformance.empty", Data()), ("conformance.mebibyte", Samples.mebibyte),
            ("conformance.binary", Samples.binary),
        ]
        for (key, data) in samples {
            try storage.save(data, key)
        }
        let other = try subject.instance()
        for (key, data) in samples {
            for (instance, label) in [(storage, "the instance that saved it"), (other, "another instance")] {
                try subject.expect(instance, loads: data, for: key, "Saved data did not load back from \(label).")
            }
        }
    }

    /// A key that was never saved loads as `nil`, also when keys it is a prefix or an extension of hold data, and
    /// loading it does not create it.
    public static let missingKey = Self(
        id: "missingKey", name: "missing key: a key never saved loads as nil"
    ) { subject in
        let storage = try subject.instance()
        let missing = "conformance.missing"
        try subject.expect(storage, loads: nil, for: missing, "A storage that holds nothing loaded data.")
        try storage.save(Data("neighbour".utf8), "conformance.missing.neighbour")
        try storage.save(Data("prefix".utf8), "conformance.miss")
        for instance in [storage, try subject.instance()] {
            for _ in 0..<2 {
                try subject.expect(
                    instance, loads: nil, for: missing, "A key never saved loaded data; its neighbours were saved.")
            }
        }
    }

    /// Removal leaves nothing under the key and nothing else changed; removing a key with nothing stored, even on a
    /// storage that has never saved anything, does nothing; a removed key can be saved again.
    public static let removal = Self(
        id: "removal", name: "removal: a removed key loads as nil; removing a missing key does nothing"
    ) { subject in
        let fresh = try subject.instance()
        try fresh.remove("conformance.never-saved")
        let storage = try subject.instance()
        let key = "conformance.removed"
        try storage.save(Data("doomed".utf8), key)
        try storage.save(Data("kept".utf8), "conformance.kept")
        try storage.remove(key)
        try subject.expect(storage, loads: nil, for: key, "A removed key still loads data.")
        try storage.remove(key)
        try subject.expect(
            storage, loads: Data("kept".utf8), for: "conformance.kept", "Removing one key changed another.")
        try storage.save(Data("back".utf8), key)
        try subject.expect(
            storage, loads: Data("back".utf8), for: key, "A key saved again after its removal does not load it.")
    }

    /// A save replaces the whole of what the key held: a shorter value leaves no tail of the longer one, empty data
    /// replaces data, and of many saves the last one stays.
    public static let overwrite = Self(
        id: "overwrite", name: "overwrite: a save replaces the whole value, and the last save stays"
    ) { subject in
        let storage = try subject.instance()
        let key = "conformance.overwritten"
        let sequence = [Samples.mebibyte, Data("short".utf8), Data(), Data("longer than empty".utf8)]
        for data in sequence {
            try storage.save(data, key)
            try subject.expect(
                storage, loads: data, for: key, "A save over the previous value did not replace all of it.")
        }
        for round in 0..<50 {
            try storage.save(Data("round \(round)".utf8), key)
        }
        try subject.expect(
            try subject.instance(), loads: Data("round 49".utf8), for: key,
            "After 50 saves, the last is not what loads.")
    }

    /// An instance sees what others saved and removed after it was made, as another process would: none keeps a
    /// stale copy.
    public static let secondInstance = Self(
        id: "secondInstance", name: "second instance: each instance sees the others' saves and removals"
    ) { subject in
        let first = try subject.instance()
        let second = try subject.instance()
        let key = "conformance.shared"
        try subject.expect(second, loads: nil, for: key, "A new storage loaded data.")
        try first.save(Data("from the first".utf8), key)
        try subject.expect(
            second, loads: Data("from the first".utf8), for: key, "An instance does not see another's save.")
        try second.save(Data("from the second".utf8), key)
        try subject.expect(
            first, loads: Data("from the second".utf8), for: key,
            "An instance that saved a key does not see another instance's later save of it."
        )
        try first.remove(key)
        try subject.expect(second, loads: nil, for: key, "An instance does not see another's removal.")
        try subject.expect(try subject.instance(), loads: nil, for: key, "A new instance loads a removed key.")
    }
}
