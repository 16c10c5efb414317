import Foundation

/// Held while a test starts a process. Foundation's `Process.run()` crashed in `memcpy` on Linux when tests on
/// several threads started processes at the same moment: starts take turns, in every test target of the package
/// (they run in one process).
public let processSpawning = NSLock()
