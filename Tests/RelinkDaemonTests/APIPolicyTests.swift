import BenchSupport
import DBus
import Foundation
import Testing

/// systemd/org.relink.conf on a system-type bus with the system bus's
/// default policy: an unprivileged user (nobody, via setpriv) may call
/// Manager1 and introspect, but not Control1; root may call both.
@Suite(.serialized, .timeLimit(.minutes(1))) struct APIPolicyTests {
    static var policyFile: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("systemd/org.relink.conf").path
    }

    static func config(socket: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
          </policy>
          <include>\(policyFile)</include>
          <!-- test only: root plays relinkd -->
          <policy user="root"><allow own="org.relink"/></policy>
        </busconfig>
        """
    }

    /// Runs a tool on its own thread (``runTool(_:_:)``).
    func run(_ tool: String, _ args: [String]) async throws -> (status: Int32, output: String) {
        try await runTool(tool, args)
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv to play nobody"))
    func unprivilegedUsersReachTheClientAPIButNotControl1() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("relink-policy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/bus"
        try Self.config(socket: socket).write(toFile: dir + "/bus.conf", atomically: true, encoding: .utf8)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--config-file=\(dir)/bus.conf", "--nofork", "--nopidfile"]
        try daemon.run()
        defer {
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        try await eventually(timeout: .seconds(10), "the bus socket") { FileManager.default.fileExists(atPath: socket) }
        _ = chmod(socket, 0o777)

        // The socket file exists from dbus-daemon's bind, a moment before it
        // listens (a connect then is refused, seen once in CI): connect until
        // one is accepted, bounded.
        var connected: Connection?
        try await eventually(timeout: .seconds(10), "the bus to accept a connection") {
            if connected == nil { connected = try? await Connection.connect(to: .address("unix:path=\(socket)")) }
            return connected != nil
        }
        let service = try #require(connected)
        defer { service.close() }
        try service.export(try ExportedObject(path: try ObjectPath("/org/relink"), interfaces: [
            DBusInterface("org.relink.Manager1", methods: [DBusMethod("ListIdentifiers", out: [.init("ids", .array(.string))]) { _ in [.array(.string, [])] }]),
        ]))
        try service.export(try ExportedObject(path: try ObjectPath("/org/relink/control"), interfaces: [
            DBusInterface("org.relink.Control1", methods: [DBusMethod("Status", out: [.init("s", .string)]) { _ in [.string("{}")] }]),
        ]))
        #expect(try await service.requestName("org.relink") == .primaryOwner)
        let serving = Task { try await service.serve() }
        defer { serving.cancel() }

        let address = "--address=unix:path=\(socket)"
        let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/busctl", address]
        let list = try await run("/usr/bin/setpriv", nobody + ["call", "org.relink", "/org/relink", "org.relink.Manager1", "ListIdentifiers"])
        #expect(list.status == 0, "\(list.output)")
        let introspect = try await run("/usr/bin/setpriv", nobody + ["introspect", "org.relink", "/org/relink"])
        #expect(introspect.status == 0 && introspect.output.contains("org.relink.Manager1"), "\(introspect.output)")
        let control = try await run("/usr/bin/setpriv", nobody + ["call", "org.relink", "/org/relink/control", "org.relink.Control1", "Status"])
        #expect(control.status != 0 && control.output.contains("Access denied"), "\(control.output)")
        let asRoot = try await run("/usr/bin/busctl", [address, "call", "org.relink", "/org/relink/control", "org.relink.Control1", "Status"])
        #expect(asRoot.status == 0, "\(asRoot.output)")
    }
}
