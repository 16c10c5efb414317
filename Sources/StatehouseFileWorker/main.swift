// A helper for the file-watching tests: another process changing a key of a file storage.
//
//   StatehouseFileWorker DIRECTORY KEY set VALUE       saves the Int VALUE under KEY
//   StatehouseFileWorker DIRECTORY KEY count COUNT     saves 1, 2, … COUNT under KEY, each as soon as the last is saved
//   StatehouseFileWorker DIRECTORY KEY remove          removes KEY
//   StatehouseFileWorker DIRECTORY KEY replace VALUE   writes VALUE to a file of its own in DIRECTORY, then renames it
//                                                      over KEY's file, as a tool that knows nothing of Statehouse would
//
// A DIRECTORY of the form `defaults:SUITE` stands for the UserDefaults suite SUITE instead (set, count and remove).
import Foundation
import Statehouse

let arguments = CommandLine.arguments
let commands = ["set", "count", "remove", "replace"]
guard arguments.count >= 4, commands.contains(arguments[3]),
    arguments[3] == "remove" ? arguments.count == 4 : arguments.count == 5 && Int(arguments[4]) != nil
else {
    FileHandle.standardError.write(
        Data("usage: StatehouseFileWorker DIRECTORY KEY (set VALUE | count COUNT | remove | replace VALUE)\n".utf8)
    )
    exit(2)
}
let fileStorage = FileStorage(directory: URL(fileURLWithPath: arguments[1]))
let storage: any StateStorage = arguments[1].hasPrefix("defaults:")
    ? UserDefaultsStorage(suiteName: String(arguments[1].dropFirst("defaults:".count))) : fileStorage
let key = arguments[2]
let number = arguments.count == 5 ? Int(arguments[4])! : 0
do {
    switch arguments[3] {
    case "set":
        try storage.save(Data("\(number)".utf8), key: key)
    case "count":
        for value in 1...max(1, number) { try storage.save(Data("\(value)".utf8), key: key) }
    case "remove":
        try storage.remove(key: key)
    default:
        let incoming = fileStorage.directory.appendingPathComponent("incoming-\(getpid())")
        try Data("\(number)".utf8).write(to: incoming)
        guard rename(incoming.path, fileStorage.fileURL(for: key).path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: incoming.path])
        }
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
