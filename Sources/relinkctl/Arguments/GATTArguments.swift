import RelinkAPI
import ArgumentParser
import RelinkClient

/// Identifier, peripheral, service and characteristic.
struct GATTArguments: ParsableArguments {
    @Argument(help: "The restore identifier.") var identifier: String
    @Argument(help: "An address or a peripheral UUID.") var peripheral: String
    @Argument(help: "The service UUID.") var service: String
    @Argument(help: "The characteristic UUID.") var characteristic: String

    /// Checks every argument before relinkd is called.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    func check() throws(RelinkClientError) {
        _ = try APIPath.central(for: identifier)
        _ = try RelinkArguments.peripheral(peripheral)
        _ = try RelinkArguments.bluetoothUUID(service)
        _ = try RelinkArguments.bluetoothUUID(characteristic)
    }

    var json: [String: Any] {
        ["identifier": identifier, "peripheral": peripheral, "service": service, "characteristic": characteristic]
    }
}
