import DBus
import Testing
@testable import BlueZ
import RelinkModel

/// What relinkd reads from the options bluetoothd passes with a hosted
/// characteristic's `ReadValue` and `WriteValue` (doc/gatt-api.txt;
/// bluetoothd 5.66 `src/gatt-database.c` `append_options`: `device`,
/// `offset` when nonzero, `link`, `prepare-authorize`, `mtu`; the bench's
/// BlueZoo also passes the central's own `type`).
@Suite struct HostedRequestOptionsTests {
    let key = CharacteristicKey(service: BluetoothUUID(shortValue: 0x180F), characteristic: BluetoothUUID(shortValue: 0x2A19))

    func options(_ entries: [String: DBusValue]) throws -> DBusValue {
        .dictionary(key: .string, value: .variant, entries.sorted { $0.key < $1.key }.map { .init(.string($0.key), .variant($0.value)) })
    }

    func device() throws -> DBusValue { .objectPath(try ObjectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01")) }

    @Test func aReadCarriesTheCentralTheOffsetAndTheMTU() throws {
        let request = HostedApplication.readRequest(key, options: try options([
            "device": try device(), "offset": .uint16(22), "link": .string("LE"), "mtu": .uint16(247),
        ]))
        #expect(request == .read(key, offset: 22, central: "AA:BB:CC:DD:EE:01", mtu: 247))
        #expect(HostedApplication.readRequest(key, options: try options([:])) == .read(key, offset: 0, central: "unknown", mtu: nil))
    }

    @Test(arguments: [("command", WriteKind.command), ("request", .request), ("reliable", .reliable), ("Reliable", .reliable)])
    func aWriteSaysTheKindTheTypeOptionNames(type: String, kind: WriteKind) throws {
        let request = HostedApplication.writeRequest(key, onlyWithoutResponse: false, arguments: [
            .array(.byte, [.byte(1), .byte(2)]), try options(["device": try device(), "type": .string(type), "mtu": .uint16(23), "offset": .uint16(18)]),
        ])
        #expect(request == .write(key, value: [1, 2], offset: 18, kind: kind, central: "AA:BB:CC:DD:EE:01", mtu: 23))
    }

    /// bluetoothd 5.66 passes no `type`: a write is a request, unless the
    /// characteristic can only be written without response.
    @Test func withoutATypeTheCharacteristicsPropertiesDecide() throws {
        let arguments: [DBusValue] = [.array(.byte, [.byte(9)]), try options(["device": try device(), "mtu": .uint16(517), "link": .string("LE")])]
        #expect(HostedApplication.writeRequest(key, onlyWithoutResponse: false, arguments: arguments)
            == .write(key, value: [9], offset: 0, kind: .request, central: "AA:BB:CC:DD:EE:01", mtu: 517))
        #expect(HostedApplication.writeRequest(key, onlyWithoutResponse: true, arguments: arguments)
            == .write(key, value: [9], offset: 0, kind: .command, central: "AA:BB:CC:DD:EE:01", mtu: 517))
        #expect(HostedApplication.writeRequest(key, onlyWithoutResponse: false, arguments: [.string("not bytes")]) == nil)
    }
}
