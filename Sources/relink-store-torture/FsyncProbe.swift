import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Measures the disk's own durable-write rate: append 4 KiB, then
/// `fdatasync` (what SQLite does for a WAL commit on Linux), in a loop, in
/// the directory under test. That rate bounds durable commits per second.
struct FsyncProbe {
    let directory: String

    /// Syncs per second over about `seconds`.
    func rate(seconds: Double) throws -> Double {
        let path = directory + "/fsync-probe-\(getpid())"
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        guard fd >= 0 else { throw ProbeError.open(String(cString: strerror(errno))) }
        defer { close(fd); unlink(path) }
        let block = [UInt8](repeating: 0xA5, count: 4096)
        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        var offset: off_t = 0
        while clock.now - start < .milliseconds(Int64(seconds * 1000)) {
            let written = block.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, offset) }
            guard written == block.count, fdatasync(fd) == 0 else { throw ProbeError.write(String(cString: strerror(errno))) }
            offset += off_t(block.count)
            count += 1
        }
        let elapsed = clock.now - start
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    enum ProbeError: Error { case open(String), write(String) }
}
