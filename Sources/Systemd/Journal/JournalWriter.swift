import CSystemd
import Glibc

/// Hands entries to journald with `sd_journal_sendv(3)`.
enum JournalWriter {
    /// Sends one entry. Values may contain newlines or any bytes.
    /// - Throws: ``SystemdError/journalSendFailed(errno:)`` when journald is not
    ///   reachable or rejects the entry.
    static func send(_ entry: JournalEntry) throws(SystemdError) {
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in entry.fields {
            let start = bytes.count
            bytes.append(contentsOf: field.name.utf8)
            bytes.append(UInt8(ascii: "="))
            bytes.append(contentsOf: field.value.utf8)
            ranges.append(start..<bytes.count)
        }
        let result = bytes.withUnsafeMutableBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -EINVAL }
            let vectors = ranges.map { range in
                iovec(iov_base: base + range.lowerBound, iov_len: range.count)
            }
            return vectors.withUnsafeBufferPointer { iov in
                sd_journal_sendv(iov.baseAddress, Int32(iov.count))
            }
        }
        if result < 0 { throw .journalSendFailed(errno: -result) }
    }
}
