import Glibc

/// A unix datagram socket in a temp directory that plays systemd's notify
/// socket: point a child's `$NOTIFY_SOCKET` at ``path`` and read what it sends.
final class NotifyListener: Sendable {
    let path: String
    private let fd: Int32

    struct SetupError: Error, CustomStringConvertible {
        var description: String
    }

    init(directory: String) throws {
        path = directory + "/notify"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SetupError(description: "socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw SetupError(description: "socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let error = errno
            close(fd)
            throw SetupError(description: "bind \(path): errno \(error)")
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// The datagrams waiting now, oldest first, without blocking.
    func drain() -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 { return messages }
            messages.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
    }

    /// Everything received during `duration`. A real-time wait, kept and
    /// listed in Tests/README.md: what its callers test is timing itself
    /// (watchdog pings per period, silence while stalled or unasked).
    func collect(for duration: Duration) async -> [String] {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: duration)
        var messages: [String] = []
        while clock.now < end {
            messages += drain()
            try? await Task.sleep(for: .milliseconds(5))
        }
        return messages + drain()
    }

    /// Datagrams until one satisfies `done` (included), or `nil` after `timeout`.
    func collect(until done: (String) -> Bool, timeout: Duration) async -> [String]? {
        var messages: [String] = []
        do {
            try await eventually(timeout: timeout, "a datagram that ends the collection") {
                for message in drain() {
                    messages.append(message)
                    if done(message) { return true }
                }
                return false
            }
        } catch {
            return nil
        }
        return messages
    }
}
