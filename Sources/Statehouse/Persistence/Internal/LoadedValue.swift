import Foundation

/// The value a persisted container or store starts from, and what went wrong getting it.
struct LoadedValue<Value> {
    var value: Value
    var error: StorageError?
    /// `false` when the stored data could neither be read nor kept aside: writing would destroy it.
    var canWrite = true

    /// Loads `key` from `storage`, decoding with `codec`; `defaultValue` when nothing (usable) is stored.
    init(key: String, storage: some StateStorage, default defaultValue: Value, codec: StateCodec<Value>) {
        value = defaultValue
        let data: Data
        do {
            guard let stored = try storage.load(key: key) else { return }
            data = stored
        } catch let error as StorageError where error.keptAside != nil {
            // The storage moved the bytes it could not use out of the way itself (sealed data that failed its
            // authentication, say): writing can no longer destroy them.
            self.error = error
            return
        } catch {
            // The storage's own kind stays (an unauthentic value is not an I/O failure); its message comes first.
            let typed = error as? StorageError
            self.error = StorageError(typed?.kind ?? .io, key: key, operation: typed?.operation ?? .load, message: """
                Could not read \(String(reflecting: key)): \(typed?.message ?? "\(error).") It starts from its \
                default and will not write, so that it does not overwrite data it could not read. Fix the storage \
                and restart.
                """, cause: typed?.cause ?? error)
            canWrite = false
            return
        }
        do {
            value = try codec.decode(data)
        } catch {
            let kept = storage.keepAside(data, from: key)
            canWrite = kept.key != nil
            let reason = kept.failure.map { "\($0)" } ?? ""
            let what = kept.key.map { "kept under \(String(reflecting: $0))" }
                ?? "could not be kept aside (\(reason)), so it will not be written over"
            self.error = StorageError(.undecodable, key: key, operation: .decode, message: """
                The data stored under \(String(reflecting: key)) is not a \(Value.self): \
                \(CodingFailure.describe(error)). It starts from its default; the data was \(what). Migrate or \
                remove it.
                """, cause: error, keptAside: kept.key)
        }
    }
}
