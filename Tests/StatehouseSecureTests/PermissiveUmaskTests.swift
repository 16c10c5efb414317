import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import Testing

/// Owner-only must not depend on the umask of the process that creates the files: a service started with
/// `umask 000` is common.
@Suite("Owner-only under a permissive umask", .serialized)
struct PermissiveUmaskTests {
    @Test func everyFolderAndFileTheStorageAndKeyCreateIsOwnerOnly() async throws {
        let directory = TemporaryDirectory()
        let keyFile = directory.url.appendingPathComponent("keys/nested/state.key")
        let data = directory.url.appendingPathComponent("data/nested/deeper")
        let arguments = SecureCrashTests.writerArguments(directory: data, keyFile: keyFile, key: "umask.counter")
        let endedBySignal = try await offThePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            // The writer creates the key file, the folders and the data with every permission the umask allows.
            process.arguments = ["-c", #"umask 000 && exec "$0" "$@""#,
                                 helperExecutable(named: "StatehouseSecureCrashWriter").path] + arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            _ = output.fileHandleForReading.availableData  // "ready": the key and a value are written
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return process.terminationReason == .uncaughtSignal
        }
        #expect(endedBySignal, "the writer ended by itself: it could not start")
        var modes: [String: Int] = [:]
        let entries = FileManager.default.enumerator(atPath: directory.url.path)?.compactMap { $0 as? String } ?? []
        for entry in [""] + entries {
            let path = directory.url.appendingPathComponent(entry).path
            modes[entry] = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        }
        #expect(modes["keys/nested/state.key"] == 0o600)
        #expect(modes.keys.contains { $0.hasPrefix("data/nested/deeper/") })
        let open = modes.filter { $0.value & 0o077 != 0 }.map { "\($0.key.isEmpty ? "." : $0.key): \(String($0.value, radix: 8))" }
        #expect(open.isEmpty, "group or others may access \(open.sorted())")
    }
}
