import Foundation

/// A helper executable of this package (the other process of a test), built in the same folder as the tests.
public func helperExecutable(named name: String) -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while !directory.path.hasSuffix("/debug") && !directory.path.hasSuffix("/release") && directory.path != "/" {
        directory.deleteLastPathComponent()
    }
    return directory.appendingPathComponent(name)
}

/// Runs the helper executable `name` (another process of a test) with `arguments`, and waits for it to end.
///
/// - Returns: Whether it succeeded.
public func runHelper(_ name: String, _ arguments: [String]) throws -> Bool {
    let process = Process()
    process.executableURL = helperExecutable(named: name)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    return process.terminationReason == .exit && process.terminationStatus == 0
}
