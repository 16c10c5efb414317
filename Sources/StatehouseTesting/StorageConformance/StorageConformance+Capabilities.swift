extension StorageConformance {
    /// What a storage promises beyond `StateStorage`, so that the checks of those promises run.
    ///
    /// Conformance to `ChangeDetectingStorage` and `TransactionalStorage` is also found by casting: declare
    /// ``changeDetection`` or ``transactions`` to make a storage that lacks them fail, rather than skip those checks.
    public struct Capabilities: OptionSet, Sendable {
        public let rawValue: Int

        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// The storage conforms to `ChangeDetectingStorage`.
        public static let changeDetection = Capabilities(rawValue: 1 << 0)
        /// The storage conforms to `TransactionalStorage`.
        public static let transactions = Capabilities(rawValue: 1 << 1)
        /// The storage keeps its data under ``Place/directory``, so that one under a directory that cannot be created
        /// must fail with clear errors: ``Check/storageErrors`` runs only for storages that declare this.
        public static let keepsDataInPlaceDirectory = Capabilities(rawValue: 1 << 2)
    }
}
