import Foundation

extension StorageConformance {
    /// A program that saves an increasing counter to the storage until it is killed: the other process of
    /// ``Check/crashAtomicity(writer:rounds:)``.
    ///
    /// The program must:
    /// - make the storage on the place it is given, as the test's closure does, and save the key it is given over
    ///   and over, each time with a larger counter, written as decimal digits (what a `StateContainer<Int>` stores);
    /// - print a line to its standard output once the key holds its first value;
    /// - end by itself once the process whose identifier it is given is gone, so that a test that crashed leaves
    ///   nothing running.
    ///
    /// ```swift
    /// let writer = StorageConformance.CrashWriter(executable: writerURL) { place, key, parent in
    ///     [place.directory.path, key, String(parent)]
    /// }
    /// ```
    public struct CrashWriter: Sendable {
        /// The program to run.
        public let executable: URL
        /// Its arguments, from the check's place, the key to save and the test process's identifier.
        public let arguments: @Sendable (_ place: Place, _ key: String, _ parentProcessID: Int32) -> [String]

        /// - Parameters:
        ///   - executable: The program to run.
        ///   - arguments: Its arguments, from the check's place, the key to save and the test process's identifier.
        public init(
            executable: URL,
            arguments: @escaping @Sendable (_ place: Place, _ key: String, _ parentProcessID: Int32) -> [String]
        ) {
            self.executable = executable
            self.arguments = arguments
        }
    }
}
