import DBus
import Synchronization
import Testing
@testable import BlueZ
import RelinkModel

/// The peripheral role's registrations across a bluetoothd restart, played
/// as real bluetoothd 5.66 did it on the real-BlueZ bench
/// (docs/real-bluez.md, difference 28): after a SIGTERM restart the new
/// daemon's adapter is not powered yet and has no `LEAdvertisingManager1`,
/// so an `UnregisterAdvertisement` of what the old daemon had fails with
/// `UnknownMethod`; relinkd logged "bluetoothd refused the peripheral
/// role's registration" at each such restart and waited for the power-on.
@Suite(.serialized) struct HostingAfterRestartTests {
    static let adapter = try! ObjectPath("/org/bluez/hci0")

    /// A tiny `org.bluez`: `hci0`'s `Adapter1` (powered or not) and, with
    /// `managers`, `GattManager1` and `LEAdvertisingManager1`, whose calls it records.
    final class Bluetoothd: Sendable {
        let connection: Connection
        let serving: Task<Void, any Error>
        private let log = Calls()
        var calls: [String] { log.list.withLock { $0 } }

        final class Calls: Sendable { let list = Mutex<[String]>([]) }

        init(on address: String, powered: Bool, managers: Bool) async throws {
            connection = try await Connection.connect(to: .address(address))
            let log = self.log
            func recording(_ name: String, _ arguments: [DBusArgument]) -> DBusMethod {
                DBusMethod(name, in: arguments) { _ in log.list.withLock { $0.append(name) }; return [] }
            }
            let options = DBusArgument("options", .dictionary(key: .string, value: .variant))
            var interfaces = [DBusInterface(BlueZInterface.adapter, properties: [DBusProperty("Address", .string), DBusProperty("Powered", .boolean)])]
            if managers {
                interfaces.append(DBusInterface(BlueZInterface.gattManager, methods: [
                    recording("RegisterApplication", [DBusArgument("application", .objectPath), options]),
                    recording("UnregisterApplication", [DBusArgument("application", .objectPath)]),
                ]))
                interfaces.append(DBusInterface(BlueZInterface.advertisingManager, methods: [
                    recording("RegisterAdvertisement", [DBusArgument("advertisement", .objectPath), options]),
                    recording("UnregisterAdvertisement", [DBusArgument("advertisement", .objectPath)]),
                ]))
            }
            connection.addObjectManager(at: .root)
            try connection.export(ExportedObject(path: HostingAfterRestartTests.adapter, interfaces: interfaces, values: [
                BlueZInterface.adapter: ["Address": .string("00:00:00:00:00:01"), "Powered": .boolean(powered)],
            ]))
            let connection = connection
            serving = Task { try await connection.serve() }
            guard try await connection.requestName(BlueZInterface.service) == .primaryOwner else {
                throw DBusError(.failed, "org.bluez is taken")
            }
        }

        func stop() {
            serving.cancel()
            connection.close()
        }
    }

    @Test func aNewBluetoothdIsNotAskedToUnregisterWhatTheOldOneHad() async throws {
        try await withPrivateBus { address, _ in
            let first = try await Bluetoothd(on: address, powered: true, managers: true)
            let connection = try await Connection.connect(to: .address(address))
            defer { connection.close() }
            let client = BlueZClient(connection: connection)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.run() }
                group.addTask { for await _ in client.events {} }
                defer { group.cancelAll() }
                try await client.waitUntilReady(timeout: .seconds(10))
                let app = HostedApplication(root: try ObjectPath("/relink/hosted/hub"),
                                            services: [PublishedService(uuid: BluetoothUUID(shortValue: 0xFFF0))],
                                            advertisement: PeripheralAdvertisement(localName: "Hub-1"))
                try await client.host(app, adapter: Self.adapter)
                #expect(first.calls == ["RegisterApplication", "RegisterAdvertisement"])

                // SIGTERMed: the next bluetoothd comes up with the adapter off and no managers yet.
                first.stop()
                // The bus daemon orders each connection's messages, not two
                // connections': the new daemon asks for org.bluez once the
                // bus has seen the old one leave, as a restarted bluetoothd does.
                try await within(.seconds(10), "the bus releasing the old bluetoothd's name") {
                    try await connection.nameOwner(of: BlueZInterface.service) == nil
                }
                let second = try await Bluetoothd(on: address, powered: false, managers: false)
                defer { second.stop() }
                try await within(.seconds(10), "the client reading the new bluetoothd") {
                    await client.mirror.adapter(Self.adapter)?.powered == false
                }
                // Before the fix: UnknownMethod for UnregisterAdvertisement.
                try await client.host(app, adapter: Self.adapter)
                #expect(second.calls.isEmpty)
            }
        }
    }
}
