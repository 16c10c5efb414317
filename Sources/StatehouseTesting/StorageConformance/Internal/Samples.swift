import Foundation

/// Data the checks save: sizes and bytes that storages get wrong.
enum Samples {
    /// 1 MiB of varied bytes (a fixed pseudo-random sequence, so that a failure repeats).
    static let mebibyte: Data = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return Data(
            (0..<(1 << 20)).map { _ in
                // xorshift64: cheap, and every byte value occurs.
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                return UInt8(truncatingIfNeeded: state)
            })
    }()

    /// Every byte value, then NULs, invalid UTF-8 and a lone byte-order mark: bytes a storage that treats data as
    /// text would change.
    static let binary: Data =
        Data((0...255).map(UInt8.init)) + Data([0, 0, 0xC3, 0x28, 0xFF, 0xFE, 0xEF, 0xBB, 0xBF, 0])
}
