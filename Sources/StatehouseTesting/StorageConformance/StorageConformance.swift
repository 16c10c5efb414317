/// The promises every `StateStorage` makes, as checks that any storage's tests can run: ours and third parties'.
///
/// Each ``Check`` exercises one promise of `StateStorage` and, where the storage offers them, of
/// `ChangeDetectingStorage` and `TransactionalStorage`. Run them all as the arguments of one parameterised test, so
/// that a failure names the check that failed:
///
/// ```swift
/// import StatehouseTesting
/// import Testing
///
/// @Suite(.serialized)
/// struct MyStorageConformance {
///     @Test(arguments: StorageConformance.checks)
///     func conforms(_ check: StorageConformance.Check) async throws {
///         try await check.run(capabilities: .keepsDataInPlaceDirectory) { place in
///             MyStorage(directory: place.directory)
///         }
///     }
/// }
/// ```
///
/// The closure makes an instance of the storage on a ``Place`` (a directory and a name of the check's own). A check
/// calls it once for each instance it needs: instances made on one place must share their data, as instances in two
/// processes would. Checks that do not apply to the storage (fingerprints on a storage that does not detect changes)
/// are skipped, and show as such. Mark the suite `.serialized`: the checks start threads and processes of their own.
///
/// ``checks`` holds every check that needs nothing but the closure. Crash atomicity needs a program that writes to
/// the storage until it is killed: add ``Check/crashAtomicity(writer:rounds:)`` to the arguments when the storage
/// promises it.
public enum StorageConformance {
    /// Every check that needs nothing but a way to make the storage, in a stable order.
    public static let checks: [Check] = [
        .roundTrip, .missingKey, .removal, .overwrite, .hostileKeys, .secondInstance,
        .concurrentWritersOnDistinctKeys, .concurrentWritersOnOneKey, .storageErrors, .damagedFiles, .fingerprints,
        .transactions,
    ]
}
