import Foundation

/// Data another process stored that could be neither used nor kept aside is never written over: each write tries
/// again to keep it aside first, and is refused while that fails.
extension StatePersistence {
    /// Runs on `writer`, before a write while ``PersistenceMachine/unkeptOutsideData`` is set: keeps what the key
    /// holds aside if it is still unusable. Returns `nil` when the write may go on (the data is kept aside now, or
    /// the key holds a value or nothing), or the error that refuses it.
    func keepUnkeptOutsideDataAside() -> StorageError? {
        let data: Data
        do {
            guard let stored = try storage.load(key: key) else { return nil }
            data = stored
        } catch let error as StorageError where error.keptAside != nil {
            // The storage kept the bytes aside itself (sealed data that failed its authentication).
            return nil
        } catch {
            return withheldWrite(because: error)
        }
        // A value someone stored since: this process's change is newer, and replaces it as any write does.
        if (try? codec.decode(data)) != nil { return nil }
        do {
            _ = try storage.setAside(data, from: key)
            return nil
        } catch {
            return withheldWrite(because: error)
        }
    }

    /// Runs on `writer`, before a write: data another process stored since this process last read or wrote the key
    /// was looked at by no check (checks skip the key while a local change is pending, since that change is newer
    /// and replaces any value stored meanwhile). A value is replaced as usual; bytes that do not decode are kept
    /// aside first, as a check would have kept them; what cannot be read holds no bytes to keep, and is written
    /// over as before. `seen` is what this process knows of the stored bytes, taken with the write's decision (a
    /// fingerprint that cannot be read proves nothing: the bytes are looked at). Returns `nil` when the write may go
    /// on, or the error that refuses it, and then holds the following writes back too (see
    /// ``PersistenceMachine/unkeptOutsideData``).
    func keepUnseenOutsideDataAside(seen: PersistenceMachine<Value>.SeenData) -> StorageError? {
        guard let changeDetecting else { return nil }
        let now = try? changeDetecting.fingerprint(key: key)
        guard seen.isUnseen(now), let data = try? storage.load(key: key), (try? codec.decode(data)) == nil else {
            return nil
        }
        do {
            _ = try storage.setAside(data, from: key)
            machine.withLock { $0.keptAside(now) }
            return nil
        } catch {
            let held = withheldWrite(because: error)
            machine.withLock { $0.holdWrites(held) }
            return held
        }
    }

    private func withheldWrite(because error: any Error) -> StorageError {
        let held = machine.withLock { $0.unkeptOutsideData }
        let reason = (error as? StorageError)?.message ?? "\(CodingFailure.describe(error))."
        return StorageError(held?.kind ?? .undecodable, key: key, operation: .save, message: """
            Not writing \(String(reflecting: key)): it holds data another process stored that this one could not \
            use, and a copy of it still cannot be kept aside (\(reason)) The change stays in memory, unsaved; the \
            next change, flush or exit tries again. Make room in the storage, or move the data out of the way.
            """, cause: error)
    }
}
