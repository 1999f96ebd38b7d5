import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A unix datagram socket standing in for systemd's `NOTIFY_SOCKET`:
/// relinkd's READY=1, STATUS=, WATCHDOG=1 and STOPPING=1 arrive as text.
final class NotifyListener: Sendable {
    let path: String
    private let fd: Int32

    /// - Throws: `POSIXError` when the socket cannot be made or bound.
    init(directory: String) throws {
        path = directory + "/notify.sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { close(fd); throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// The next datagram, or nil after 200 ms without one.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    /// Collects datagrams until `condition` holds on one, or `timeout` passes.
    func waitFor(timeout: Duration, _ condition: (String) -> Bool) -> [String] {
        var seen: [String] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let message = receive() {
                seen.append(message)
                if condition(message) { return seen }
            }
        }
        return seen
    }
}
