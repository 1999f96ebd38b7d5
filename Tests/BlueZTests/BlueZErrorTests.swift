import RelinkModel
import Testing
@testable import BlueZ

@Suite struct BlueZErrorClassificationTests {
    // The exact strings BlueZ sends (src/error.h, src/device.c), and what a
    // reconnect policy must make of each.
    @Test(arguments: [
        ("org.bluez.Error.Failed", "le-connection-abort-by-local", FailureClass.transient),
        ("org.bluez.Error.Failed", "br-connection-canceled", .transient),
        ("org.bluez.Error.Failed", "Software caused connection abort", .transient),
        ("org.bluez.Error.Failed", "le-connection-concurrent-connection-limit", .transient),
        ("org.bluez.Error.Failed", "Operation already in progress", .inProgress),
        ("org.bluez.Error.InProgress", "In Progress", .inProgress),
        ("org.bluez.Error.NotReady", "Resource Not Ready", .notReady),
        ("org.bluez.Error.Failed", "le-connection-adapter-not-powered", .notReady),
        ("org.freedesktop.DBus.Error.UnknownObject", "Method \"Connect\" with signature \"\" on interface \"org.bluez.Device1\" doesn't exist", .deviceGone),
        ("org.bluez.Error.DoesNotExist", "Does Not Exist", .deviceGone),
        ("org.bluez.Error.NotSupported", "Operation is not supported", .notSupported),
        ("org.bluez.Error.NotPermitted", "Write not permitted", .notPermitted),
        ("org.bluez.Error.NotAuthorized", "Operation Not Authorized", .notPermitted),
        ("org.bluez.Error.Failed", "le-connection-key-missing", .notPermitted),
        ("org.freedesktop.DBus.Error.ServiceUnknown", "The name org.bluez was not provided by any .service files", .transient),
        ("org.freedesktop.DBus.Error.NoReply", "Did not receive a reply", .transient),
        ("org.bluez.Failed", "le-connection-abort-by-local", .transient),
        ("org.bluez.Error.Failed", "something new", .unknown),
        ("org.example.Error.Weird", "le-connection-abort-by-local", .unknown),
    ])
    func classifies(name: String, message: String, expected: FailureClass) {
        let error = BlueZError(name: name, message: message)
        #expect(error.failureClass == expected)
        // bluetoothd absent or silent: transient, and said so.
        let unavailable = ["org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NoReply"].contains(name)
        #expect(error.isServiceUnavailable == unavailable)
        #expect(error.name == name)
        #expect(error.message == message)
    }

    // What pairing can lift: BlueZ's central reports ATT 0x05, 0x0F and
    // 0x0C as NotPermitted "Not paired" (src/gatt-client.c,
    // create_gatt_dbus_error); ATT 0x08 (authorization) and a plain
    // "Read not permitted" are the peripheral's policy, not a missing bond.
    @Test(arguments: [
        ("org.bluez.Error.NotPermitted", "Not paired", true),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x0f", true),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x05", true),
        ("org.bluez.Error.NotPermitted", "Read not permitted", false),
        ("org.bluez.Error.NotPermitted", "Write not permitted", false),
        ("org.bluez.Error.NotAuthorized", "Operation Not Authorized", false),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x0e", false),
        ("org.bluez.Error.Failed", "Not paired", false),
    ])
    func insufficientSecurityIsWhatPairingLifts(name: String, message: String, expected: Bool) {
        #expect(BlueZError(name: name, message: message).isInsufficientSecurity == expected)
    }

    @Test func unknownLEReasonsAreTransient() {
        #expect(BlueZError(name: "org.bluez.Error.Failed", message: "le-connection-something-new").failureClass == .transient)
    }

    @Test func descriptionKeepsOriginal() {
        let error = BlueZError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
        #expect(error.description == "org.bluez.Error.Failed: le-connection-abort-by-local [transient]")
    }
}
