import Foundation
import Statehouse
import StatehouseTesting
import Testing

/// The conformance suite itself: each check must catch the storage bug it exists for, and report it in words that
/// say which.
@Suite("Storage conformance catches broken storages", .serialized)
struct StorageConformanceSelfTests {
    @Test func everyCheckHasItsOwnIDAndAReadableName() {
        let checks = StorageConformance.checks + [.crashAtomicity(writer: BrokenWriters.missing)]
        #expect(Set(checks.map(\.id)).count == checks.count)
        for check in checks {
            #expect(check.testDescription == check.name)
            #expect(check.name.contains(":"), "\(check.id): a name says what the check asserts")
        }
    }

    @Test func aCorrectStoragePassesTheChecksThatApply() async throws {
        for check in [
            StorageConformance.Check.roundTrip, .missingKey, .removal, .overwrite, .hostileKeys, .secondInstance,
        ] {
            let backing = Backing()
            try await check.run { _ in ShallowStorage(backing) }
        }
    }

    @Test func emptyDataTakenForNothingFailsTheRoundTrip() async throws {
        try await expectFailure(of: .roundTrip, mentioning: "loaded nothing, not 0 bytes") { backing, _ in
            ShallowStorage(backing, saveTransform: { $0.isEmpty ? nil : $0 })
        }
    }

    @Test func anErrorOfAnotherTypeIsReportedAsNotAStorageError() async throws {
        try await expectFailure(of: .missingKey, mentioning: "not a StorageError") { backing, _ in
            ShallowStorage(backing, failure: CocoaError(.fileReadUnknown))
        }
    }

    @Test func aSaveThatAppendsFailsTheOverwriteCheck() async throws {
        try await expectFailure(of: .overwrite, mentioning: "did not replace all of it") { backing, _ in
            ShallowStorage(backing, appends: true)
        }
    }

    @Test func keysFoldedToLowercaseCollide() async throws {
        try await expectFailure(of: .hostileKeys, mentioning: "they collide") { backing, _ in
            ShallowStorage(backing, keyTransform: { $0.lowercased() })
        }
    }

    @Test func keysCutAtNULCollide() async throws {
        try await expectFailure(of: .hostileKeys, mentioning: "they collide") { backing, _ in
            ShallowStorage(backing, keyTransform: { String($0.prefix { $0 != "\0" }) })
        }
    }

    @Test func keysComparedByTheirBytesMissCanonicalEquivalence() async throws {
        try await expectFailure(of: .hostileKeys, mentioning: "Swift calls the keys equal") { backing, _ in
            ShallowStorage(
                backing, keyTransform: { $0.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ".") })
        }
    }

    @Test func aKeyFollowedAsAPathEscapesThePlace() async throws {
        try await expectFailure(of: .hostileKeys, mentioning: "escaped the storage's directory") { backing, place in
            EscapingStorage(backing, directory: place.directory)
        }
    }

    @Test func anInstanceKeepingAStaleCopyFailsTheSecondInstanceCheck() async throws {
        try await expectFailure(of: .secondInstance, mentioning: "does not see another") { backing, _ in
            ShallowStorage(backing, caches: true)
        }
    }

    @Test func unlockedReadModifyWriteLosesConcurrentWrites() async throws {
        try await expectFailure(of: .concurrentWritersOnDistinctKeys, mentioning: "should hold its thread's last save")
        { backing, _ in
            WholeFileStorage(backing)
        }
    }

    @Test func aFingerprintThatNeverChangesFailsTheFingerprintCheck() async throws {
        try await expectFailure(of: .fingerprints, mentioning: "left the fingerprint unchanged") { backing, _ in
            ConstantFingerprintStorage(backing)
        }
    }

    @Test func aTransactionThatDoesNotLockLosesIncrements() async throws {
        try await expectFailure(of: .transactions, mentioning: "increments ended at") { backing, _ in
            UnlockedTransactionStorage(backing)
        }
    }

    @Test func aTransactionThatEmptiesTheKeyWhenItsTransformThrowsIsReported() async throws {
        let storage = TruncatingTransactionStorage()
        try await expectFailure(of: .transactions, mentioning: "whose transform threw changed the key") { _, _ in
            storage
        }
    }

    @Test func aDeclaredCapabilityTheStorageLacksIsAFailure() async throws {
        try await expectFailure(of: .fingerprints, capabilities: .changeDetection, mentioning: "does not conform") {
            backing, _ in
            ShallowStorage(backing)
        }
    }

    @Test func foundationErrorsWhereNothingCanBeWrittenFailTheStorageErrorsCheck() async throws {
        try await expectFailure(
            of: .storageErrors, capabilities: .keepsDataInPlaceDirectory, mentioning: "not a StorageError"
        ) { _, place in
            PlainFileStorage(directory: place.directory)
        }
    }

    @Test func storageErrorsWithoutTheKeyOrOperationFailTheStorageErrorsCheck() async throws {
        try await expectFailure(
            of: .storageErrors, capabilities: .keepsDataInPlaceDirectory, mentioning: "its key is nil"
        ) { _, place in
            PlainFileStorage(directory: place.directory, wrapsErrors: true)
        }
    }

    @Test func aFoundationErrorOnDamagedFilesFailsTheDamagedFilesCheck() async throws {
        try await expectFailure(
            of: .damagedFiles, capabilities: .keepsDataInPlaceDirectory, mentioning: "not a StorageError"
        ) { _, place in
            PlainFileStorage(directory: place.directory, base64: true)
        }
    }

    @Test func aStorageKeepingNothingInItsPlaceFailsTheDamagedFilesCheck() async throws {
        try await expectFailure(
            of: .damagedFiles, capabilities: .keepsDataInPlaceDirectory, mentioning: "Nothing under"
        ) { backing, _ in
            ShallowStorage(backing)
        }
    }

    @Test func aCrashWriterThatCannotStartIsReported() async throws {
        try await expectFailure(
            of: .crashAtomicity(writer: BrokenWriters.missing, rounds: 1), mentioning: "Could not start"
        ) { _, place in
            PlainFileStorage(directory: place.directory)
        }
    }

    @Test func aCrashWriterThatEndsWithoutSayingReadyIsReported() async throws {
        try await expectFailure(
            of: .crashAtomicity(writer: BrokenWriters.silent, rounds: 1), mentioning: "did not print a line"
        ) { _, place in
            PlainFileStorage(directory: place.directory)
        }
    }

    @Test func aTornValueAfterACrashIsReported() async throws {
        try await expectFailure(of: .crashAtomicity(writer: BrokenWriters.garbage, rounds: 3), mentioning: "torn") {
            _, place in
            PlainFileStorage(directory: place.directory)
        }
    }

    @Test func aLookupByPrefixFailsTheMissingKeyCheck() async throws {
        try await expectFailure(of: .missingKey, mentioning: "A key never saved loaded data") { backing, _ in
            PrefixMatchingStorage(backing)
        }
    }

    @Test func aRemovalThatKeepsTheDataFailsTheRemovalCheck() async throws {
        try await expectFailure(of: .removal, mentioning: "A removed key still loads data") { backing, _ in
            ShallowStorage(backing, ignoresRemoval: true)
        }
    }

    @Test func aSaveReadersCanSeeHalfWrittenFailsTheOneKeyCheck() async throws {
        try await expectFailure(of: .concurrentWritersOnOneKey, mentioning: "returned a torn value") { backing, _ in
            TearingStorage(backing)
        }
    }

    /// Writers that start before the readers have read once would be done before a slow reader looks.
    @Test func aTornValueIsSeenEvenByReadersSlowToStart() async throws {
        try await expectFailure(of: .concurrentWritersOnOneKey, mentioning: "returned a torn value") { backing, _ in
            TearingStorage(backing, opensSlowly: true)
        }
    }

    @Test func savesThatLandLateFailTheOneKeyCheck() async throws {
        try await expectFailure(of: .concurrentWritersOnOneKey, mentioning: "not a writer's last save") { backing, _ in
            LaggingStorage(backing)
        }
    }

    @Test func savesThatLandLateFailTheDistinctKeysCheck() async throws {
        try await expectFailure(of: .concurrentWritersOnDistinctKeys, mentioning: "should hold its thread's last save")
        { backing, _ in
            LaggingStorage(backing)
        }
    }

    @Test func anErrorQuotingTheValueFailsTheStorageErrorsCheck() async throws {
        try await expectFailure(
            of: .storageErrors, capabilities: .keepsDataInPlaceDirectory, mentioning: "contains the value"
        ) { _, place in
            ValueQuotingStorage(directory: place.directory)
        }
    }

    @Test func aCounterThatGoesBackAfterACrashIsReported() async throws {
        try await expectFailure(
            of: .crashAtomicity(writer: BrokenWriters.backwards, rounds: 2), mentioning: "went back from 100 to 99"
        ) { _, place in
            PlainFileStorage(directory: place.directory)
        }
    }

    /// Runs `check` against what `make` returns (on one backing that the instances share) and expects a failure
    /// whose message contains `text`.
    private func expectFailure(
        of check: StorageConformance.Check,
        capabilities: StorageConformance.Capabilities = [],
        mentioning text: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ make: @escaping @Sendable (Backing, StorageConformance.Place) -> any StateStorage
    ) async throws {
        let backing = Backing()
        let mentioned = Locked(false)
        // Every issue the broken storage causes is known; one of them must say what is broken.
        try await withKnownIssue("\(check.id) fails for a broken storage", sourceLocation: sourceLocation) {
            try await check.run(capabilities: capabilities) { place in make(backing, place) }
        } matching: { issue in
            if issue.comments.contains(where: { $0.rawValue.contains(text) }) { mentioned.withLock { $0 = true } }
            return true
        }
        #expect(
            mentioned.withLock { $0 }, "No failure of \(check.id) mentions \(text.debugDescription).",
            sourceLocation: sourceLocation)
    }
}
