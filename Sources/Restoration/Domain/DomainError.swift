/// Why a value handed to the restoration core was rejected.
///
/// Every parser in the core throws this one type, so a caller (the D-Bus API,
/// the store) can map it to a single error name such as
/// `org.relink.Error.InvalidArguments` and show `description` to the user.
public enum DomainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A restore identifier was empty, too long or held a character outside
    /// the allowed set.
    case invalidRestoreIdentifier(String, reason: String)
    /// A Bluetooth address was not six colon-separated hexadecimal octets.
    case invalidAddress(String)
    /// An address type was neither "public" nor "random".
    case invalidAddressType(String)
    /// A UUID was not 4, 8 or 32 hexadecimal digits (with or without dashes).
    case invalidBluetoothUUID(String)
    /// A peripheral identifier was not a UUID.
    case invalidPeripheralID(String)
    /// Connection options were inconsistent (reason says which rule).
    case invalidOptions(String)

    public var description: String {
        switch self {
        case .invalidRestoreIdentifier(let value, let reason):
            "invalid restore identifier \(value.debugDescription): \(reason)"
        case .invalidAddress(let value):
            "invalid Bluetooth address \(value.debugDescription): expected six hex octets like AA:BB:CC:DD:EE:FF"
        case .invalidAddressType(let value):
            "invalid address type \(value.debugDescription): expected \"public\" or \"random\""
        case .invalidBluetoothUUID(let value):
            "invalid Bluetooth UUID \(value.debugDescription): expected 16-, 32- or 128-bit hex form"
        case .invalidPeripheralID(let value):
            "invalid peripheral identifier \(value.debugDescription): expected a UUID"
        case .invalidOptions(let reason):
            "invalid connection options: \(reason)"
        }
    }
}
