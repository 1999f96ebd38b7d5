import Foundation
import Testing

@testable import DBus

/// A private dbus-daemon in a temporary directory, for one test.
///
/// The daemon runs under a small shell watchdog that kills it when the test
/// process disappears (also on a crash), and ``stop()`` (called by
/// ``withTestBus(_:)`` on every exit path) kills it with SIGKILL and removes
/// the directory.
final class TestBus: Sendable {
    let directory: String
    let address: String
    let daemonPID: Int32
    private let watchdog: Int32

    /// - Parameter serviceFiles: activatable services, as `.service` file
    ///   contents by file name, put in a `<servicedir>` of this bus.
    init(serviceFiles: [String: String] = [:]) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("relink-dbus-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir + "/services", withIntermediateDirectories: true)
        for (name, contents) in serviceFiles { try contents.write(toFile: dir + "/services/" + name, atomically: true, encoding: .utf8) }
        directory = dir
        address = "unix:path=\(dir)/bus"
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(address)</listen>
              <servicedir>\(dir)/services</servicedir>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
              <limit name="max_incoming_bytes">1000000000</limit>
              <limit name="max_outgoing_bytes">1000000000</limit>
              <limit name="max_message_size">134217728</limit>
              <limit name="max_replies_per_connection">100000</limit>
              <limit name="reply_timeout">60000</limit>
            </busconfig>
            """
        try config.write(toFile: dir + "/bus.conf", atomically: true, encoding: .utf8)
        let me = getpid()
        let script = """
            dbus-daemon --config-file='\(dir)/bus.conf' --nofork --nopidfile 2>'\(dir)/daemon.log' &
            D=$!
            echo $D > '\(dir)/daemon.pid'
            while kill -0 \(me) 2>/dev/null && kill -0 $D 2>/dev/null; do sleep 0.3; done
            kill -9 $D 2>/dev/null
            """
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(script), nil]
        defer { argv.forEach { free($0) } }
        let rc = posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ)
        guard rc == 0 else { throw DBusError(.failed, "posix_spawn: \(rc)") }
        watchdog = pid
        // Wait for the socket and the pid file.
        var daemon: Int32 = 0
        try? await eventually(timeout: .seconds(20), "dbus-daemon's socket and pid file") {
            guard Self.accepts(dir + "/bus"),
                  let s = try? String(contentsOfFile: dir + "/daemon.pid", encoding: .utf8),
                  let p = Int32(s.trimmingCharacters(in: .whitespacesAndNewlines)) else { return false }
            daemon = p
            return true
        }
        daemonPID = daemon
        guard daemon > 0 else {
            kill(pid, SIGKILL)
            var st: Int32 = 0
            waitpid(pid, &st, 0)
            throw DBusError(.failed, "dbus-daemon did not start in \(dir)")
        }
    }

    /// Whether something listens on the Unix socket at `path` (the daemon
    /// creates the file with bind() a moment before it listens).
    static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return false }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// Kills the daemon and the watchdog, and removes the directory.
    func stop() {
        kill(daemonPID, SIGKILL)
        kill(watchdog, SIGKILL)
        var st: Int32 = 0
        waitpid(watchdog, &st, 0)
        try? FileManager.default.removeItem(atPath: directory)
    }

    func connect() async throws -> Connection {
        try await Connection.connect(to: .address(address))
    }

    /// Runs a command-line tool on its own thread (never blocking the
    /// cooperative pool, which serves the objects the tool talks to);
    /// returns its exit status and output.
    func run(_ tool: String, _ args: [String]) async throws -> (status: Int32, output: String) {
        try await withCheckedThrowingContinuation { cont in
            do {
                try IOThread.spawn {
                    do {
                        let p = Process()
                        p.executableURL = URL(fileURLWithPath: tool)
                        p.arguments = args
                        let pipe = Pipe()
                        p.standardOutput = pipe
                        p.standardError = pipe
                        try p.run()
                        let data = pipe.fileHandleForReading.readDataToEndOfFile()
                        p.waitUntilExit()
                        cont.resume(returning: (p.terminationStatus, String(decoding: data, as: UTF8.self)))
                    } catch {
                        cont.resume(throwing: error)
                    }
                }
            } catch {
                cont.resume(throwing: error)
            }
        }
    }
}

/// Starts a private bus, runs `body`, and always stops the bus.
func withTestBus<T>(serviceFiles: [String: String] = [:], _ body: (TestBus) async throws -> T) async throws -> T {
    let bus = try await TestBus(serviceFiles: serviceFiles)
    defer { bus.stop() }
    return try await body(bus)
}
