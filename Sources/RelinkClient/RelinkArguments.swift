import RelinkAPI
public import RelinkModel

/// Checks of the arguments relinkd accepts, done before anything is sent
/// so that a bad argument gets the same `InvalidArguments` error whether
/// or not relinkd runs. The rules are the model's (`RelinkModel`) and the
/// limits the contract's (`RelinkAPI.APILimits`), the same relinkd applies.
public enum RelinkArguments {
    /// Longest identifier, in bytes (docs/api/errors.md).
    public static let maximumIdentifierLength = RestoreIdentifier.maximumLength
    /// Longest UUID list (scan services, connect services).
    public static let maximumUUIDs = APILimits.maximumUUIDs
    /// Longest value for ``RelinkCentral/write(peripheral:service:characteristic:value:withResponse:)``.
    public static let maximumValueBytes = APILimits.maximumWriteBytes
    /// Most events one `Events` call returns.
    public static let maximumEvents: UInt32 = APILimits.maximumEventsPage

    /// Validates an identifier by the model's rule (1 to 128 characters of
    /// `A-Z a-z 0-9 . _ - :`, the first a letter or a digit).
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    public static func identifier(_ identifier: String) throws(RelinkClientError) -> RestoreIdentifier {
        do { return try RestoreIdentifier(identifier) } catch { throw .invalid("\(error)") }
    }

    /// Checks an identifier (see ``identifier(_:)``).
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    public static func checkIdentifier(_ identifier: String) throws(RelinkClientError) {
        _ = try Self.identifier(identifier)
    }

    /// Parses a Bluetooth UUID (16-, 32- or 128-bit form) into the 128-bit
    /// lowercase form relinkd and BlueZ use.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    public static func bluetoothUUID(_ text: String) throws(RelinkClientError) -> String {
        do { return try BluetoothUUID(parsing: text).string } catch { throw .invalid("\(error)") }
    }

    /// Parses a list of Bluetooth UUIDs (at most ``maximumUUIDs``).
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    public static func bluetoothUUIDs(_ texts: [String]) throws(RelinkClientError) -> [String] {
        if texts.count > maximumUUIDs { throw .invalid("\(texts.count) UUIDs given, at most \(maximumUUIDs) are allowed.") }
        var out: [String] = []
        for t in texts { out.append(try bluetoothUUID(t)) }
        return out
    }

    /// Whether `text` is a peripheral UUID in 8-4-4-4-12 form (either case).
    public static func isUUID(_ text: String) -> Bool { (try? PeripheralID(parsing: text)) != nil }

    /// A peripheral as relinkd takes it: an address `AA:BB:CC:DD:EE:FF`
    /// (returned upper-case) or a peripheral UUID (returned lower-case).
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    public static func peripheral(_ text: String) throws(RelinkClientError) -> String {
        if isUUID(text) { return text.lowercased() }
        if let address = try? BluetoothAddress(parsing: text) { return address.string }
        throw .invalid("\(echo(text)) is neither a Bluetooth address (AA:BB:CC:DD:EE:FF) nor a peripheral UUID.")
    }

    /// A value to write (at most ``maximumValueBytes``).
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    public static func checkValue(_ value: [UInt8]) throws(RelinkClientError) {
        if value.count > maximumValueBytes {
            throw .invalid("The value is \(value.count) bytes long, more than \(maximumValueBytes).")
        }
    }

    /// Parses hex bytes such as `01ff`, `01:ff`, `0x01ff` or `01 ff`.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`) for an odd
    ///   number of digits or a character that is not a hex digit.
    public static func hexBytes(_ text: String) throws(RelinkClientError) -> [UInt8] {
        guard let bytes = HexBytes.parse(text) else {
            throw .invalid("\(echo(text)) is not hex bytes (an even number of hex digits).")
        }
        return bytes
    }

    /// A rejected argument as messages show it: quoted, and cut after the
    /// model's `DomainError.echoLimit` characters with its length in bytes
    /// (the form the model's own errors use), so that a huge argument is
    /// never echoed back whole.
    public static func echo(_ text: String) -> String {
        DomainError.echo(text)
    }

    /// Lowercase hex, two digits per byte, no separator.
    public static func hex(_ bytes: [UInt8]) -> String { HexBytes.string(bytes) }
}
