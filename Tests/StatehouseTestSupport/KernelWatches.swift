import Foundation

/// What the kernel says this process watches and runs, read from `/proc` (Linux only): the tests check that many
/// followers share one watch and one thread, as the kernel sees it.
public enum KernelWatches {
    /// How many inotify watches of this process are on the file or directory at `path`.
    public static func inotifyWatches(on path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        let inode = "ino:" + String(UInt64(info.st_ino), radix: 16)
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.reduce(0) { count, descriptor in
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"))
                == "anon_inode:inotify",
                let details = try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8)
            else { return count }
            return count + details.split(separator: "\n").filter {
                $0.hasPrefix("inotify ") && $0.split(separator: " ").contains(Substring(inode))
            }.count
        }
    }

    /// How many threads of this process are named `name`.
    public static func threads(named name: String) -> Int {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return threads.filter { thread in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(thread)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .newlines) == name
        }.count
    }
}
