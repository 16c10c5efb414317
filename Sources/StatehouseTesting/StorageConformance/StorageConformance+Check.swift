import Foundation
import Statehouse
import Testing

extension StorageConformance {
    /// One promise of the storage protocols, checked against a storage the caller makes.
    ///
    /// Pass checks as the arguments of a parameterised test and run each with ``run(capabilities:sourceLocation:against:)``;
    /// a failing argument is shown by its ``name``.
    public struct Check: Sendable, Identifiable, CustomStringConvertible, CustomTestStringConvertible {
        /// A stable identifier, such as `"roundTrip"`: Swift Testing uses it to run one argument again.
        public let id: String
        /// What the check asserts, in a few words.
        public let name: String
        private let body: @Sendable (ConformanceSubject) async throws -> Void

        init(id: String, name: String, body: @escaping @Sendable (ConformanceSubject) async throws -> Void) {
            self.id = id
            self.name = name
            self.body = body
        }

        public var description: String { name }
        public var testDescription: String { name }

        /// Runs the check against the storage `makeStorage` makes, and records what fails as issues at
        /// `sourceLocation`.
        ///
        /// Each run gets a fresh ``Place``, removed afterwards: `makeStorage` is called with it once for every
        /// instance the check needs, and every instance made on it must see the others' data, as another process
        /// would. For a storage whose instances share nothing (an in-memory one), make one instance in the test and
        /// return it each time:
        ///
        /// ```swift
        /// @Test(arguments: StorageConformance.checks)
        /// func conforms(_ check: StorageConformance.Check) async throws {
        ///     let storage = MemoryStorage()
        ///     try await check.run { _ in storage }
        /// }
        /// ```
        ///
        /// A check that does not apply to the storage, such as ``fingerprints`` for a storage that does not conform
        /// to `ChangeDetectingStorage`, cancels its test case with the reason (`Test.cancel`, Swift 6.3 and later;
        /// earlier, it passes). The event stream and Xcode show the case as cancelled; `swift test`'s console lists
        /// it among the passed.
        ///
        /// - Parameters:
        ///   - capabilities: What the storage promises beyond what casting finds; see ``Capabilities``.
        ///   - sourceLocation: Where failures are reported; the caller's line by default.
        ///   - makeStorage: Makes an instance of the storage under test on the given place. What it throws is a
        ///     failure of the check, except in ``storageErrors``, where it may throw a `StorageError`.
        /// - Throws: An error if the check's temporary directory cannot be created; the cancellation of a check that
        ///   does not apply. Failures of the storage are recorded as issues, not thrown.
        public func run(
            capabilities: Capabilities = [],
            sourceLocation: SourceLocation = #_sourceLocation,
            against makeStorage: @escaping @Sendable (Place) throws -> any StateStorage
        ) async throws {
            let root = FileManager.default.temporaryDirectory
                .appendingPathComponent("statehouse-conformance-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            let subject = ConformanceSubject(
                root: root, checkID: id, capabilities: capabilities, makeStorage: makeStorage,
                sourceLocation: sourceLocation
            )
            do {
                try await body(subject)
            } catch is CheckStopped {
                // The failure that stopped the check is recorded already.
            }
        }
    }
}
