import DBus
import Foundation
import Testing
@testable import BlueZ
import RelinkModel

/// The BlueZ client against behaviours of real bluetoothd 5.66 (issue 20,
/// docs/real-bluez.md), played by a tiny `org.bluez` on a private bus.
@Suite(.serialized) struct RealBluetoothdClientTests {
    /// Runs a client on `address` until `body` returns.
    func withClient(on address: String, _ body: (BlueZClient, EventLog) async throws -> Void) async throws {
        let connection = try await Connection.connect(to: .address(address))
        defer { connection.close() }
        let client = BlueZClient(connection: connection)
        let log = EventLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            group.addTask { for await e in client.events { await log.append(e) } }
            defer { group.cancelAll() }  // also when body throws: the group would wait for run() forever
            try await client.waitUntilReady(timeout: .seconds(10))
            try await body(client, log)
        }
    }

    /// Finding 2: no `Connected=true` signal after `Device1.Connect` on the
    /// central side. `connect` must return once bluetoothd says the link is
    /// up (asked with `GetAll` when no signal came), and the mirror and the
    /// events must show it as if it had been signalled. Also with the
    /// signal (the mock, other BlueZ versions), where nothing changes.
    @Test(arguments: [(false, false), (false, true), (true, true)])
    func connectSeesTheLinkUpWithOrWithoutAConnectedSignal(signalsConnected: Bool, resolves: Bool) async throws {
        try await withPrivateBus { address, _ in
            let bluetoothd = try await TinyBluetoothd.start(on: address, signalsConnected: signalsConnected, resolves: resolves)
            defer { bluetoothd.stop() }
            try await withClient(on: address) { client, log in
                // A client that waited for a signal that never comes would
                // end this connect with its timeout error instead (no
                // wall-clock bound: that failed once on a loaded CI machine).
                try await client.connect(TinyBluetoothd.device, timeout: .seconds(60))
                #expect(await client.mirror.device(TinyBluetoothd.device)?.connected == true)
                let up = BlueZEvent.mirror(.propertyChanged(
                    path: TinyBluetoothd.device, interface: BlueZInterface.device, property: "Connected", old: .boolean(false), new: .boolean(true)))
                try await within(.seconds(5), "the link-up event") { await log.contains(up) }
                if resolves {
                    try await client.waitForServices(TinyBluetoothd.device, timeout: .seconds(5))
                }
                #expect(await log.events.filter { $0 == up }.count == 1)
            }
        }
    }

    /// bluetoothd powering the adapter off says so first (`PowerState`
    /// `on-disabling`), then drops the links, then sets `Powered` false. The
    /// client reports the adapter off at the first, before the link's drop,
    /// and once; on again at `Powered` true, or when the power-off ends with
    /// the adapter still on (G10, docs/real-bluez.md).
    @Test func anAdapterIsReportedOffWhenBluetoothdBeginsPoweringItOffBeforeItsLinksDrop() async throws {
        try await withPrivateBus { address, _ in
            let bluetoothd = try await TinyBluetoothd.start(on: address)
            defer { bluetoothd.stop() }
            try await withClient(on: address) { client, log in
                try await client.connect(TinyBluetoothd.device, timeout: .seconds(60))
                let off = BlueZEvent.adapterPowered(TinyBluetoothd.adapter, false), on = BlueZEvent.adapterPowered(TinyBluetoothd.adapter, true)
                let down = BlueZEvent.mirror(.propertyChanged(
                    path: TinyBluetoothd.device, interface: BlueZInterface.device, property: "Connected", old: .boolean(true), new: .boolean(false)))
                try bluetoothd.setAdapter("PowerState", .string("on-disabling"))
                try bluetoothd.setDevice("Connected", .boolean(false))
                try bluetoothd.setAdapter("Powered", .boolean(false))
                try bluetoothd.setAdapter("PowerState", .string("off"))
                try await within(.seconds(10), "the adapter off and the link down") {
                    let state = await client.mirror.adapter(TinyBluetoothd.adapter)?.powerState
                    return await log.contains(down) && state == "off"
                }
                var events = await log.events
                #expect(events.filter { $0 == off }.count == 1, "off once: \(events)")
                #expect((events.firstIndex(of: off) ?? .max) < (events.firstIndex(of: down) ?? -1), "off before the link's drop")
                #expect(await client.mirror.adapter(TinyBluetoothd.adapter)?.isOn == false)

                try bluetoothd.setAdapter("PowerState", .string("off-enabling"))
                try bluetoothd.setAdapter("Powered", .boolean(true))
                try bluetoothd.setAdapter("PowerState", .string("on"))
                try await within(.seconds(10), "the adapter on") { await log.contains(on) }
                // A power-off that ends with the adapter still on.
                try bluetoothd.setAdapter("PowerState", .string("on-disabling"))
                try bluetoothd.setAdapter("PowerState", .string("on"))
                try await within(.seconds(10), "off and on again") { await log.events.filter { $0 == on }.count == 2 }
                events = await log.events
                #expect(events.filter { $0 == off }.count == 2 && events.last(where: { $0 == off || $0 == on }) == on, "\(events)")
            }
        }
    }

    /// Finding 7: a call to bluetoothd while `org.bluez` has no owner fails
    /// at once (`NameHasNoOwner`/`ServiceUnknown`), and never asks the bus
    /// to start it.
    @Test func aCallWhileBluetoothdIsDownNeverActivatesIt() async throws {
        try await withPrivateBus { address, marker in
            let connection = try await Connection.connect(to: .address(address))
            defer { connection.close() }
            let client = BlueZClient(connection: connection)
            do {
                try await client.connect(TinyBluetoothd.device, timeout: .seconds(10))
                Issue.record("no error")
            } catch let e as BlueZError {
                // dbus-daemon says NameHasNoOwner for an activatable name, ServiceUnknown otherwise.
                #expect([DBusError.Name.serviceUnknown.rawValue, DBusError.Name.nameHasNoOwner.rawValue].contains(e.name), "\(e)")
                #expect(e.isServiceUnavailable)
            }
            #expect(!FileManager.default.fileExists(atPath: marker), "the bus was asked to start bluetoothd")
        }
    }

    /// Finding 7: with no bluetoothd, discovery wanted is not tried against
    /// the bus; it starts when `org.bluez` is back.
    @Test func discoveryWaitsForBluetoothdToComeBack() async throws {
        try await withPrivateBus { address, marker in
            try await withClient(on: address) { client, _ in
                do {
                    try await client.startDiscovery(adapter: TinyBluetoothd.adapter, filter: DiscoveryFilter())
                } catch let e as BlueZError {
                    #expect(e.isServiceUnavailable, "\(e)")
                }
                #expect(!FileManager.default.fileExists(atPath: marker), "the bus was asked to start bluetoothd")
                let bluetoothd = try await TinyBluetoothd.start(on: address)
                defer { bluetoothd.stop() }
                try await within(.seconds(10), "discovery started on the new bluetoothd") { bluetoothd.calls.contains("StartDiscovery") }
                #expect(bluetoothd.calls.prefix(2) == ["SetDiscoveryFilter", "StartDiscovery"])
                #expect(!FileManager.default.fileExists(atPath: marker))
            }
        }
    }

    /// A D-Bus policy that refuses relinkd's calls to bluetoothd
    /// (`AccessDenied`) is told apart from a missing bluetoothd, reported
    /// as `notPermitted`, and asked again: once the policy lets the calls
    /// through (a reload sends no signal), the mirror is read and the
    /// adapter reported on.
    @Test func aPolicyThatRefusesTheCallsIsNotPermittedUntilItLetsThemThrough() async throws {
        try await withPrivateBus(policy: PrivateBusPolicy.denyBlueZ) { address, _, setPolicy in
            let bluetoothd = try await TinyBluetoothd.start(on: address)
            defer { bluetoothd.stop() }
            let connection = try await Connection.connect(to: .address(address))
            defer { connection.close() }
            let client = BlueZClient(connection: connection, recheck: .milliseconds(50))
            let log = EventLog()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.run() }
                group.addTask { for await e in client.events { await log.append(e) } }
                defer { group.cancelAll() }
                try await client.waitUntilReady(timeout: .seconds(10))
                #expect(await client.bluetoothdPresence == .refused)
                #expect(await client.watchAdapter(TinyBluetoothd.adapter) == AdapterStatus(.notPermitted))
                #expect(await client.mirror.adapters.isEmpty)
                try await setPolicy(PrivateBusPolicy.allowAll)
                try await within(.seconds(10), "the adapter reported on once the calls go through") {
                    await log.contains(.adapterStatus(TinyBluetoothd.adapter, AdapterStatus(.poweredOn)))
                }
                #expect(await log.contains(.reset(.accessGranted)))
                #expect(await client.bluetoothdPresence == .present)
            }
        }
    }

    /// Seen by the restart-survival suite: right after a SIGKILL restart of
    /// bluetoothd 5.66 the kernel still runs the killed daemon's scan, so
    /// the new one's `StartDiscovery` fails in the kernel (MGMT Busy) and
    /// bluetoothd answers `InProgress`, dropping the client. relinkd took
    /// that for "already discovering" and never scanned again. Now a start
    /// refused without a session of ours is tried again until it starts;
    /// `InProgress` while a session runs (a filter update) is still fine.
    @Test func aDiscoveryStartRefusedAsBusyIsTriedAgain() async throws {
        try await withPrivateBus { address, _ in
            let bluetoothd = try await TinyBluetoothd.start(on: address, busyDiscoveryStarts: 2)
            defer { bluetoothd.stop() }
            try await withClient(on: address) { client, _ in
                await #expect(throws: BlueZError.self) {
                    try await client.startDiscovery(adapter: TinyBluetoothd.adapter, filter: DiscoveryFilter())
                }
                try await within(.seconds(20), "discovery started after the refusals") { bluetoothd.discovering }
                #expect(bluetoothd.calls.filter { $0 == "StartDiscovery" }.count == 3)
                // An update while discovering: InProgress means the new filter applies.
                try await client.startDiscovery(adapter: TinyBluetoothd.adapter, filter: DiscoveryFilter(services: [BluetoothUUID(shortValue: 0x180D)]))
                #expect(bluetoothd.calls.filter { $0 == "StartDiscovery" }.count == 4)
                #expect(await client.discoveryRetries.isEmpty)
            }
        }
    }
}
