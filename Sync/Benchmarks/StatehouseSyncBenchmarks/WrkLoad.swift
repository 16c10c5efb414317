import Foundation

/// A run of `wrk` (github.com/wg/wrk, Debian's `wrk`) pushing single actions, with the Lua script that makes each
/// request: each of its threads is a client of its own, on one connection, which pushes the action after the last
/// one the server took (`wrk` also builds a request it never sends, so a counter of requests would leave a gap).
struct WrkLoad {
    static var executable: URL? {
        ["/usr/bin/wrk", "/usr/local/bin/wrk"].map(URL.init(fileURLWithPath:))
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    let script: URL

    init(folder: URL, token: String) throws {
        script = folder.appendingPathComponent("push.lua")
        try Data(Self.lua(token: token).utf8).write(to: script)
    }

    /// Runs `wrk` for `duration`; returns how many answers were not 200 (each may leave its client's later pushes
    /// refused as out of order, which the caller's count of applied actions shows).
    func run(_ wrk: URL, url: URL, duration: Duration) async throws -> Int {
        let process = Process()
        process.executableURL = wrk
        let seconds = max(1, Int(nanoseconds(duration) / 1e9))
        process.arguments = ["-t16", "-c16", "-d\(seconds)s", "-s", script.path, url.absoluteString]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Read off the cooperative pool: `wrk` runs for seconds.
        let text = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
        return text.split(separator: "\n").compactMap { line in
            line.hasPrefix("refused ") ? Int(line.dropFirst("refused ".count)) : nil
        }.reduce(0, +)
    }

    private static func lua(token: String) -> String {
        """
        local threads = {}
        function setup(thread)
          thread:set("id", #threads)
          table.insert(threads, thread)
        end
        function init(args)
          applied = 0
          refused = 0
        end
        function request()
          local body = '{"client":"wrk-' .. id .. '","actions":[{"seq":' .. applied + 1 .. ',"action":{"count":{"_0":1}}}]}'
          return wrk.format("POST", nil, {["Content-Type"] = "application/json", ["Authorization"] = "Bearer \(token)"}, body)
        end
        function response(status, headers, body)
          if status == 200 then applied = applied + 1 else refused = refused + 1 end
        end
        function done(summary, latency, requests)
          for _, thread in ipairs(threads) do print("refused " .. thread:get("refused")) end
        end
        """
    }
}
