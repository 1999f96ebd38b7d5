import BlueZ
import DBus
import Restoration
import RelinkModel

/// Turns what a BlueZ operation threw into the core's failure. The BlueZ
/// layer is the one place that classifies error names (``BlueZ/BlueZError``,
/// into the model's one ``RelinkModel/FailureClass``).
enum FailureMapping {
    /// The classified failure for any error a BlueZ operation threw.
    static func failure(_ error: any Error) -> ConnectionFailure {
        let bluez: BlueZError
        switch error {
        case let e as BlueZError: bluez = e
        case let e as DBusError: bluez = BlueZError(name: e.name.rawValue, message: e.message)
        default: bluez = BlueZError(name: RelinkErrorName.failed.rawValue, message: "\(error)")
        }
        return ConnectionFailure(bluez.failureClass, errorName: bluez.name, message: bluez.message)
    }

    /// Whether a failed read or write is the peripheral refusing the
    /// value's length (ATT 0x0D, Invalid Attribute Value Length), as BlueZ
    /// names it: `InvalidValueLength`, or 5.66's `InvalidArguments` with
    /// the message "Invalid Length" (seen on the real-bluetoothd bench).
    static func isLengthRefusal(_ failure: ConnectionFailure) -> Bool {
        failure.errorName == "org.bluez.Error.InvalidValueLength"
            || (failure.errorName == "org.bluez.Error.InvalidArguments" && failure.message == "Invalid Length")
    }

    /// Whether a failed read, write or StartNotify is the peripheral asking
    /// for an encrypted or authenticated link, which pairing gives
    /// (``BlueZ/BlueZError/isInsufficientSecurity``): relinkd pairs on
    /// demand for it (docs/api/Central1.md, "Pairing on demand").
    static func needsPairing(_ failure: ConnectionFailure) -> Bool {
        BlueZError(name: failure.errorName, message: failure.message).isInsufficientSecurity
    }
}
