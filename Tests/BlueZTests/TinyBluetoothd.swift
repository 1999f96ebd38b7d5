import DBus
import Foundation
import Synchronization
import Testing
@testable import BlueZ

/// Runs `body` with a private dbus-daemon of its own on which `org.bluez`
/// is activatable, as on a system bus with BlueZ's service file: its
/// launcher only creates `activationMarker` and fails (as a bluetoothd
/// activation fails without systemd), so a test can tell whether anything
/// asked the bus to start bluetoothd.
func withPrivateBus<T>(_ body: (_ address: String, _ activationMarker: String) async throws -> T) async throws -> T {
    try await withPrivateBus(policy: PrivateBusPolicy.allowAll) { address, marker, _ in try await body(address, marker) }
}

/// `<policy>` elements of the private bus's configuration.
enum PrivateBusPolicy {
    /// Everyone may send, receive and own anything.
    static let allowAll = #"<policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/></policy>"#
    /// As ``allowAll``, but no call reaches `org.bluez` (`AccessDenied`).
    static let denyBlueZ = #"<policy context="default"><allow send_destination="*"/><deny send_destination="org.bluez"/><allow receive_sender="*"/><allow own="*"/></policy>"#
}

/// ``withPrivateBus(_:)`` with `policy` in the bus's configuration; `body`
/// may change it (the bus reloads its configuration before that returns).
func withPrivateBus<T>(policy: String,
                       _ body: (_ address: String, _ activationMarker: String, _ setPolicy: (String) async throws -> Void) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relink-bluez-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory + "/services", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let address = "unix:path=\(directory)/bus", marker = directory + "/bluetoothd-activated"
    try "[D-BUS Service]\nName=org.bluez\nExec=/bin/sh -c 'touch \(marker); exit 1'\n"
        .write(toFile: directory + "/services/org.bluez.service", atomically: true, encoding: .utf8)
    func writeConfig(_ policy: String) throws {
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>\(address)</listen><auth>EXTERNAL</auth>
              <servicedir>\(directory)/services</servicedir>
              \(policy)
            </busconfig>
            """.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
    }
    try writeConfig(policy)
    let daemon = Process()
    daemon.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    daemon.arguments = ["dbus-daemon", "--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile"]
    try daemon.run()
    // SIGKILL: the daemon inherits the test process's blocked signals, SIGTERM among them.
    defer { kill(daemon.processIdentifier, SIGKILL) }
    // Bounded wait for the daemon to listen.
    let deadline = ContinuousClock.now + .seconds(10)
    while (try? await Connection.connect(to: .address(address)))?.close() == nil {
        guard ContinuousClock.now < deadline else { throw DBusError(.failed, "dbus-daemon did not start in \(directory)") }
        try await Task.sleep(for: .milliseconds(10))
    }
    return try await body(address, marker) { policy in
        try writeConfig(policy)
        let connection = try await Connection.connect(to: .address(address))
        defer { connection.close() }
        _ = try await connection.call(destination: "org.freedesktop.DBus", path: try ObjectPath("/org/freedesktop/DBus"),
                                      interface: "org.freedesktop.DBus", method: "ReloadConfig", arguments: [], timeout: .seconds(10))
    }
}

/// A tiny bluetoothd on a private bus: `org.bluez` with an object manager,
/// one powered adapter (`hci0`, recording its discovery calls) and one
/// device whose `Connect` brings the link up.
///
/// With `signalsConnected` false it plays real bluetoothd 5.66's central
/// side (issue 20 finding 2): `Connected` becomes true with no
/// `PropertiesChanged`, though `Get`/`GetAll` say true; with `resolves`,
/// `ServicesResolved=true` is signalled (as 5.66 does) before `Connect`
/// replies.
final class TinyBluetoothd: Sendable {
    static let adapter = try! ObjectPath("/org/bluez/hci0")
    static let device = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02")

    let connection: Connection
    private let recorder: Recorder
    private let serving: Task<Void, any Error>

    /// The methods called on it, in order.
    var calls: [String] { recorder.calls.withLock { $0 } }
    /// Whether a client has a discovery session (a `StartDiscovery` accepted, not stopped).
    var discovering: Bool { recorder.discovering.withLock { $0 } }

    private init(connection: Connection, recorder: Recorder, serving: Task<Void, any Error>) {
        self.connection = connection
        self.recorder = recorder
        self.serving = serving
    }

    /// Exports the objects, takes `org.bluez` and serves until ``stop()``.
    ///
    /// `busyDiscoveryStarts`: that many `StartDiscovery` calls are refused
    /// as 5.66 refuses one while the kernel still runs a killed
    /// bluetoothd's scan (MGMT Busy): `org.bluez.Error.InProgress`, and the
    /// client gets no discovery session. A `StartDiscovery` of a client
    /// already discovering is `InProgress` too, as in BlueZ.
    static func start(on address: String, signalsConnected: Bool = true, resolves: Bool = true,
                      busyDiscoveryStarts: Int = 0) async throws -> TinyBluetoothd {
        let connection = try await Connection.connect(to: .address(address))
        let log = Recorder()
        log.busyStarts.withLock { $0 = busyDiscoveryStarts }
        let inProgress = DBusError(DBusError.Name("org.bluez.Error.InProgress"), "Operation already in progress")
        let adapter = try ExportedObject(path: Self.adapter, interfaces: [DBusInterface(
            BlueZInterface.adapter,
            methods: ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"].map { name in
                DBusMethod(name, in: name == "SetDiscoveryFilter" ? [.init("filter", .dictionary(key: .string, value: .variant))] : []) { _ in
                    log.append(name)
                    switch name {
                    case "StartDiscovery":
                        if log.busyStarts.withLock({ busy in defer { busy -= 1 }; return busy > 0 }) { throw inProgress }
                        if log.discovering.withLock({ on in defer { on = true }; return on }) { throw inProgress }
                    case "StopDiscovery":
                        log.discovering.withLock { $0 = false }
                    default:
                        break
                    }
                    return []
                }
            },
            properties: [DBusProperty("Address", .string), DBusProperty("Powered", .boolean), DBusProperty("Discovering", .boolean),
                         DBusProperty("PowerState", .string)])],
            values: [BlueZInterface.adapter: ["Address": .string("00:00:00:00:00:01"), "Powered": .boolean(true), "Discovering": .boolean(false),
                                              "PowerState": .string("on")]])
        let device = try ExportedObject(path: Self.device, interfaces: [DBusInterface(
            BlueZInterface.device,
            methods: [DBusMethod("Connect") { _ in
                log.append("Connect")
                let device = log.device.withLock { $0 }
                try device?.setValue(.boolean(true), of: "Connected", in: BlueZInterface.device)
                if resolves { try device?.setValue(.boolean(true), of: "ServicesResolved", in: BlueZInterface.device) }
                return []
            }],
            properties: [
                DBusProperty("Address", .string), DBusProperty("AddressType", .string), DBusProperty("Adapter", .objectPath),
                DBusProperty("Connected", .boolean, emitsChanged: signalsConnected), DBusProperty("ServicesResolved", .boolean),
            ])],
            values: [BlueZInterface.device: [
                "Address": .string("00:00:00:00:00:02"), "AddressType": .string("public"), "Adapter": .objectPath(Self.adapter),
                "Connected": .boolean(false), "ServicesResolved": .boolean(false),
            ]])
        log.device.withLock { $0 = device }
        log.adapter.withLock { $0 = adapter }
        connection.addObjectManager(at: .root)
        try connection.export(adapter)
        try connection.export(device)
        let serving = Task { try await connection.serve() }
        guard try await connection.requestName(BlueZInterface.service) == .primaryOwner else {
            throw DBusError(.failed, "org.bluez is taken")
        }
        return TinyBluetoothd(connection: connection, recorder: log, serving: serving)
    }

    /// Sets the adapter's `property` (Powered, PowerState), signalled as bluetoothd does.
    func setAdapter(_ property: String, _ value: DBusValue) throws {
        try recorder.adapter.withLock { $0 }?.setValue(value, of: property, in: BlueZInterface.adapter)
    }

    /// Sets the device's `property` (Connected), signalled.
    func setDevice(_ property: String, _ value: DBusValue) throws {
        try recorder.device.withLock { $0 }?.setValue(value, of: property, in: BlueZInterface.device)
    }

    /// Leaves the bus.
    func stop() {
        serving.cancel()
        connection.close()
    }

    /// The call log, and the device object for the handlers made before it.
    private final class Recorder: Sendable {
        let calls = Mutex<[String]>([])
        let device = Mutex<ExportedObject?>(nil)
        let adapter = Mutex<ExportedObject?>(nil)
        let busyStarts = Mutex(0)
        let discovering = Mutex(false)
        func append(_ call: String) { calls.withLock { $0.append(call) } }
    }
}

/// Waits, with a bound, until `condition` holds.
func within(_ bound: Duration, _ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + bound
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw BlueZError.timedOut(what) }
        try await Task.sleep(for: .milliseconds(5))  // a poll interval under the bound, not a settle wait
    }
}
