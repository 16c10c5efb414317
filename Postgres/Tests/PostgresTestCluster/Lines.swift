import Foundation

/// The lines `handle` delivers (a helper process's output, or this one's input), read on a thread of their own, as
/// they come, until its end.
public func readLines(from handle: FileHandle) -> AsyncStream<String> {
    let (stream, continuation) = AsyncStream<String>.makeStream()
    Thread.detachNewThread {
        var pending = Data()
        while case let data = handle.availableData, !data.isEmpty {
            pending.append(data)
            while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                continuation.yield(String(decoding: pending[..<end], as: UTF8.self))
                pending.removeSubrange(...end)
            }
        }
        continuation.finish()
    }
    return stream
}
