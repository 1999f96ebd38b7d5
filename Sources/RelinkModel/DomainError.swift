/// Why a value was rejected by its model type.
///
/// Every parser in `RelinkModel` throws this one type, so every layer (the
/// D-Bus API, the store, the core, the client library) maps it to one error
/// name, `org.relink.Error.InvalidArguments`, and shows `description` to the
/// user. A rejected value is echoed back shortened (``echoLimit``), never
/// whole.
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
    /// A peripheral-role form (a service, an advertisement, their JSON) was
    /// malformed or broke a rule (reason says which).
    case invalidPeripheralRole(String)
    /// An adapter name was not 1 to 32 lowercase letters, digits, `_` or `-`.
    case invalidAdapter(String)
    /// An adapter state was not one of ``AdapterState``'s names.
    case invalidAdapterState(String)
    /// An adapter role was not one of ``AdapterRole``'s names.
    case invalidAdapterRole(String)
    /// A manufacturer- or service-data prefix was malformed, longer than
    /// any advertisement carries, or had a mask of another length (the
    /// reason says which).
    case invalidDataPrefix(String)
    /// A transfer identifier was not a UUID.
    case invalidTransferID(String)
    /// A transfer was empty, too long, or had a bad offset or chunk size.
    case invalidTransfer(String)

    /// How many characters of a rejected value a message shows.
    public static let echoLimit = 64

    /// The value as a quoted string literal, cut at ``echoLimit`` characters
    /// (every message that shows a rejected value uses it).
    public static func echo(_ value: String) -> String {
        guard value.count > echoLimit else { return value.debugDescription }
        return String(value.prefix(echoLimit)).debugDescription + "… (\(value.utf8.count) bytes)"
    }

    /// The message shown to users: what was rejected and what is expected.
    public var description: String {
        switch self {
        case .invalidRestoreIdentifier(let value, let reason):
            "invalid restore identifier \(Self.echo(value)): \(reason)"
        case .invalidAddress(let value):
            "invalid Bluetooth address \(Self.echo(value)): expected six hex octets like AA:BB:CC:DD:EE:FF"
        case .invalidAddressType(let value):
            "invalid address type \(Self.echo(value)): expected \"public\" or \"random\""
        case .invalidBluetoothUUID(let value):
            "invalid Bluetooth UUID \(Self.echo(value)): expected 16-, 32- or 128-bit hex form"
        case .invalidPeripheralID(let value):
            "invalid peripheral identifier \(Self.echo(value)): expected a UUID"
        case .invalidOptions(let reason):
            "invalid connection options: \(reason)"
        case .invalidPeripheralRole(let reason):
            "invalid peripheral role: \(reason)"
        case .invalidAdapter(let value):
            "invalid adapter name \(Self.echo(value)): expected 1 to 32 of a-z 0-9 _ - (like hci0)"
        case .invalidAdapterState(let value):
            "invalid adapter state \(Self.echo(value)): expected one of \(AdapterState.allCases.map(\.rawValue).joined(separator: ", "))"
        case .invalidAdapterRole(let value):
            "invalid adapter role \(Self.echo(value)): expected one of \(AdapterRole.allCases.map(\.rawValue).joined(separator: ", "))"
        case .invalidDataPrefix(let reason):
            "invalid advertising data prefix: \(reason)"
        case .invalidTransferID(let value):
            "invalid transfer identifier \(Self.echo(value)): expected a UUID"
        case .invalidTransfer(let reason):
            "invalid transfer: \(reason)"
        }
    }
}
