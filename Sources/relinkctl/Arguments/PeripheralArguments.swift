import ArgumentParser
import RelinkClient

/// A restore identifier and one of its peripherals (an address or a
/// peripheral UUID), both checked before relinkd is called.
struct PeripheralArguments: ParsableArguments {
    @Argument(help: "The restore identifier.") var identifier: String
    @Argument(help: "An address AA:BB:CC:DD:EE:FF or a peripheral UUID.") var peripheral: String

    /// Checks the identifier and the peripheral.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`).
    mutating func validate() throws {
        try ArgumentCheck.run { [identifier, peripheral] () throws(RelinkClientError) in
            try RelinkArguments.checkIdentifier(identifier)
            _ = try RelinkArguments.peripheral(peripheral)
        }
    }
}
