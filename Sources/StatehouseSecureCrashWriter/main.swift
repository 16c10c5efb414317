// A helper for the secure storage's crash test and the storage conformance suite's crash check on EncryptedStorage:
// writes increasing numbers to an encrypted container, with write-through, until it is killed.
// Usage: StatehouseSecureCrashWriter DIRECTORY KEY_FILE KEY PARENT_PID
import Foundation
import Statehouse
import StatehouseSecure

let arguments = CommandLine.arguments
guard arguments.count == 5, let parent = Int32(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: StatehouseSecureCrashWriter DIRECTORY KEY_FILE KEY PARENT_PID\n".utf8))
    exit(2)
}
let storage: EncryptedStorage
do {
    let key = try EncryptionKey.loadOrCreate(at: URL(fileURLWithPath: arguments[2]))
    storage = EncryptedStorage(directory: URL(fileURLWithPath: arguments[1]), key: key)
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
let counter = StateContainer(0, key: arguments[3], storage: storage, writes: .writeThrough, externalChanges: .ignore)
if let error = counter.storageError?.value {
    // A stored value that does not open must fail the test, not be started over from 0.
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
counter.update { $0 += 1 }  // written (write-through) before "ready", so that every round has a value to check
FileHandle.standardOutput.write(Data("ready\n".utf8))
// Never outlive the test that started it (a crashed test process cannot kill it): stop as soon as the parent is gone
// (this process is then re-parented), or after a minute.
let deadline = ContinuousClock.now + .seconds(60)
while ContinuousClock.now < deadline, getppid() == parent {
    counter.update { $0 += 1 }
}
