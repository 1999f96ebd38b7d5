/// An ATT error a central gets for a read or a write (Core spec Vol 3
/// Part F 3.4.1.1; CoreBluetooth's `CBATTError`): what a program answers
/// a request with, and what relinkd answers when the program cannot.
///
/// Only the codes bluetoothd can pass on from a GATT application: it maps
/// the application's D-Bus error name to the code (``bluezErrorName``).
public enum ATTError: String, Sendable, Hashable, CaseIterable {
    /// 0x02: the value may not be read.
    case readNotPermitted
    /// 0x03: the value may not be written.
    case writeNotPermitted
    /// 0x06: the request is not supported.
    case requestNotSupported
    /// 0x07: the offset is past the value's end.
    case invalidOffset
    /// 0x08: the link lacks authorization.
    case insufficientAuthorization
    /// 0x0D: the value's length is wrong for the attribute.
    case invalidAttributeValueLength
    /// 0x0E: the request failed for a reason none of the codes names
    /// (relinkd's answer when the program does not answer in time, and to a
    /// read of an uncached value while the program is away).
    case unlikelyError
    /// 0x80: an application error.
    case applicationError

    /// The code on the air.
    public var code: UInt8 {
        switch self {
        case .readNotPermitted: 0x02
        case .writeNotPermitted: 0x03
        case .requestNotSupported: 0x06
        case .invalidOffset: 0x07
        case .insufficientAuthorization: 0x08
        case .invalidAttributeValueLength: 0x0D
        case .unlikelyError: 0x0E
        case .applicationError: 0x80
        }
    }

    /// The D-Bus error name a GATT application replies for bluetoothd to
    /// send this code (`src/gatt-database.c`, `dbus_error_to_att_ecode`:
    /// `NotPermitted` gives 0x02 to a read and 0x03 to a write, `Failed`
    /// 0x80, a name it does not know 0x0E).
    public var bluezErrorName: String {
        switch self {
        case .readNotPermitted, .writeNotPermitted: "org.bluez.Error.NotPermitted"
        case .requestNotSupported: "org.bluez.Error.NotSupported"
        case .invalidOffset: "org.bluez.Error.InvalidOffset"
        case .insufficientAuthorization: "org.bluez.Error.NotAuthorized"
        case .invalidAttributeValueLength: "org.bluez.Error.InvalidValueLength"
        case .unlikelyError: "org.relink.Error.ATTUnlikely"
        case .applicationError: "org.bluez.Error.Failed"
        }
    }
}
