import Foundation

/// What a peripheral received from a transfer (issue 22 item 6), checked
/// against the bytes sent: the bench's lock logs every value its firmware
/// characteristic receives (`firmware_log`), the fake bluetoothd keeps them.
public enum TransferLog {
    /// The values of a `firmware_log` file, in order (each record: its
    /// length, 4 bytes little-endian, then its bytes); nil for a file that
    /// is not such records.
    public static func values(inFile path: String) -> [[UInt8]]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let bytes = [UInt8](data)
        var values: [[UInt8]] = []
        var at = 0
        while at < bytes.count {
            guard at + 4 <= bytes.count else { return nil }
            let count = (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
            at += 4
            guard at + count <= bytes.count else { return nil }
            values.append(Array(bytes[at..<(at + count)]))
            at += count
        }
        return values
    }

    /// The bytes received twice when `writes`, in order, are `data` from
    /// its start to its end where a write may start again at an earlier
    /// offset (a chunk sent again after a crash or a link drop); nil when
    /// they are not that (a byte lost, out of order, or the end missing).
    /// `data` should repeat nowhere (random bytes), so that an offset is
    /// found by its content.
    public static func duplicates(in writes: [[UInt8]], of data: [UInt8]) -> Int? {
        var position = 0, twice = 0
        for write in writes {
            if data[position...].starts(with: write) {
                position += write.count
                continue
            }
            guard let start = stride(from: position - 1, through: 0, by: -1).first(where: { data[$0...].starts(with: write) }) else { return nil }
            twice += min(position, start + write.count) - start
            position = max(position, start + write.count)
        }
        return position == data.count ? twice : nil
    }
}
