import BenchSupport
import DBus
import Synchronization
import Testing
@testable import BlueZ
import RelinkModel

/// How a hosted characteristic's `WriteValue` tells a write with response
/// from one without, called the way bluetoothd 5.66 calls it
/// (`src/gatt-database.c`, `chrc_write_cb`/`send_write`): it passes no
/// `type` option (only `device`, `link`, `mtu`, `offset`,
/// `prepare-authorize`), and for a characteristic with
/// `write-without-response` it answers the central itself and sends the
/// call with no reply expected, whatever the central sent. Seen on the
/// real-bluetoothd bench in session 12: a central's Write Command became a
/// `write-request` with `withResponse: true` (docs/real-bluez.md, difference 27).
@Suite struct HostedWriteKindTests {
    let key = CharacteristicKey(service: BluetoothUUID(shortValue: 0xFFF0), characteristic: BluetoothUUID(shortValue: 0xFFF1))

    /// (options as bluetoothd or the mock passes them, whether a reply is expected) → withResponse relinkd reports.
    @Test(arguments: [
        (["device", "link", "mtu"], true, false),     // bluetoothd 5.66, characteristic with write-without-response
        (["device", "link", "mtu"], false, true),     // bluetoothd 5.66, write only: it waits for relinkd's answer
        (["type=command"], false, false),             // the mock (BlueZoo forwards the central's type)
        (["type=request"], false, true),
    ])
    func aWriteIsWithResponseOnlyWhenBluetoothdWaitsForTheAnswer(options: [String], noReplyExpected: Bool, withResponse: Bool) async throws {
        try await withPrivateBus { address, _ in
            let seen = Mutex<[Bool]>([])
            let root = try ObjectPath("/relink/hosted/writes")
            let interface = HostedApplication.characteristicInterface(key, onlyWithoutResponse: false, root: root) { _, request in
                if case .write(_, _, _, let kind, _, _) = request { seen.withLock { $0.append(kind.withResponse) } }
                return .done
            }
            let server = try await Connection.connect(to: .address(address))
            defer { server.close() }
            let path = try ObjectPath("/relink/hosted/writes/char0")
            try server.export(ExportedObject(path: path, interfaces: [interface]))
            let serving = Task { try await server.serve() }
            defer { serving.cancel() }

            let bluetoothd = try await Connection.connect(to: .address(address))
            defer { bluetoothd.close() }
            let device = try ObjectPath("/org/bluez/hci0/dev_00_AA_01_02_00_02")
            let entries: [DBusValue.DictionaryEntry] = options.map { option in
                switch option {
                case "device": .init(.string("device"), .variant(.objectPath(device)))
                case "link": .init(.string("link"), .variant(.string("LE")))
                case "mtu": .init(.string("mtu"), .variant(.uint16(517)))
                default: .init(.string("type"), .variant(.string(String(option.dropFirst("type=".count)))))
                }
            }
            var call = try Message.methodCall(destination: server.uniqueName, path: path, interface: BlueZInterface.gattCharacteristic,
                                              member: "WriteValue", body: [.array(.byte, [.byte(1)]), .dictionary(key: .string, value: .variant, entries)])
            if noReplyExpected {
                call.noReplyExpected = true
                try bluetoothd.send(call)
            } else {
                // 30 s: in a full parallel swift test run on two loaded cores this
                // call once got no reply within 10 s (CI-like run, session 15).
                _ = try await bluetoothd.call(call, timeout: .seconds(30))
            }
            try await eventually(timeout: .seconds(30), poll: .milliseconds(10), "the write reaching the handler") { !seen.withLock { $0 }.isEmpty }
            #expect(seen.withLock { $0 } == [withResponse])
        }
    }
}
