import ArgumentParser
import RelinkClient

/// Identifier, peripheral, service and characteristic: what the GATT
/// commands (subscribe, unsubscribe, read, write) act on.
struct GATTArguments: ParsableArguments {
    @Argument(help: "The restore identifier.") var identifier: String
    @Argument(help: "An address or a peripheral UUID.") var peripheral: String
    @Argument(help: "The service UUID.") var service: String
    @Argument(help: "The characteristic UUID.") var characteristic: String

    /// Checks every argument before relinkd is called.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    mutating func validate() throws {
        try ArgumentCheck.run { [identifier, peripheral, service, characteristic] () throws(RelinkClientError) in
            try RelinkArguments.checkIdentifier(identifier)
            _ = try RelinkArguments.peripheral(peripheral)
            _ = try RelinkArguments.bluetoothUUID(service)
            _ = try RelinkArguments.bluetoothUUID(characteristic)
        }
    }

    /// The arguments as keys of a `--json` document.
    var json: [String: Any] {
        ["identifier": identifier, "peripheral": peripheral, "service": service, "characteristic": characteristic]
    }
}
