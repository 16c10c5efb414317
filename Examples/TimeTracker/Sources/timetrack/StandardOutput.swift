import Foundation

/// Where every command writes its results: standard output, unbuffered, so that a reader on a pipe (a test, a
/// script, `timetrack watch | …`) sees each write at once.
///
/// Failures never go here: commands throw them, and ArgumentParser prints them on standard error and exits with a
/// failing status.
enum StandardOutput {
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
