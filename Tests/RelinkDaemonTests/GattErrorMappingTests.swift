import BlueZ
import RelinkAPI
import Testing
@testable import RelinkDaemon

/// How a BlueZ failure of a read or write becomes the API's error. Seen on
/// real bluetoothd 5.66: a peripheral that refuses a value's length (ATT
/// 0x0D, Invalid Attribute Value Length) reaches the central as
/// `org.bluez.Error.InvalidArguments: Invalid Length` (511 and 512 bytes
/// with an MTU of 517 on the real-bluetoothd bench); relinkd called it
/// `NotSupported`, which says the characteristic cannot be written at all.
@Suite struct GattErrorMappingTests {
    @Test(arguments: [("org.bluez.Error.InvalidArguments", "Invalid Length"),
                      ("org.bluez.Error.InvalidValueLength", "")])
    func aLengthThePeripheralRefusesIsValueTooLong(_ name: String, _ message: String) {
        let error = APIInterfaces.gattError(BlueZError(name: name, message: message), "Write")
        guard error.code == .valueTooLong else {
            Issue.record("\(name): \(error)")
            return
        }
        let text = error.message
        #expect(text.contains("Write failed: \(name)"))
        #expect(text.contains("the peripheral refused the value's length"))
    }

    @Test func otherInvalidArgumentsStayNotSupported() {
        let error = APIInterfaces.gattError(BlueZError(name: "org.bluez.Error.InvalidArguments", message: "Invalid offset"), "Write")
        guard error.code == .notSupported else {
            Issue.record("\(error)")
            return
        }
    }
}
