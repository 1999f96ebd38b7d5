import BlueZ
import DBus
import Logging
import RelinkAPI
import RelinkModel
import Restoration

// `Central1.Pair` (docs/api/Central1.md): issue 24's first phase, the
// central side, Just Works. The loop checks the call and names the device;
// the pairing itself runs outside the loop (it can take seconds), then the
// device is trusted so that bluetoothd's background auto-connect takes it.
// The bond lives in bluetoothd's storage: relinkd stores nothing of it and
// reads `Paired`/`Bonded`/`Trusted` back from BlueZ (Peripheral1).
extension Daemon {
    /// Where relinkd's own `org.bluez.Agent1` (``PairingAgent``) is exported.
    static let agentPath: ObjectPath = {
        do { return try ObjectPath("/org/relink/agent") } catch { preconditionFailure("constant path") }
    }()
    /// The bound on BlueZ's `Device1.Pair`.
    static let pairingTimeout: Duration = .seconds(30)

    /// The loop's part of `Pair`: the identifier must have a connection
    /// intent on the peripheral, and the peripheral a link; replies the
    /// device's BlueZ object and the peripheral's UUID.
    /// - Throws: `UnknownPeripheral`, `NotConnected`.
    func pairTarget(_ id: RestoreIdentifier, _ ref: PeripheralRef) async throws(RelinkError) -> APIResult {
        let peripheral = try knownPeripheral(ref)
        guard core.machines[ConnectionIntentID(identifier: id, peripheral: peripheral)] != nil else {
            throw .unknownPeripheral("\(id) has no connection intent on \(ref): Connect first")
        }
        guard let device = await linkedDevice(of: peripheral) else { throw .notConnected("\(ref) has no link to pair over") }
        return APIResult(values: [.objectPath(device.path), .string(peripheral.description)])
    }

    /// `Central1.Pair`: checked by the loop, then `Device1.Pair` through
    /// relinkd's agent (bounded by ``pairingTimeout``) and `Trusted = true`.
    /// - Throws: as ``pairTarget(_:_:)``, and `AuthenticationFailed`,
    ///   `NotConnected`, `InProgress`, `NotReady`, `Failed` from BlueZ.
    nonisolated func pair(_ id: RestoreIdentifier, _ ref: PeripheralRef, from caller: APICaller) async throws(RelinkError) {
        let target = try await submit(.pairTarget(id, ref), from: caller).get()
        guard case .objectPath(let device)? = target.values.first else { throw .failed("the device could not be located") }
        let peripheral = target.values.dropFirst().first.map { "\($0)" } ?? "\(ref)"
        let started = ContinuousClock.now
        do {
            try await env.bluez.pair(device, agent: Self.agentPath, timeout: Self.pairingTimeout)
        } catch {
            let failure = Self.pairingError(error)
            env.logger.warning("pairing failed", metadata: .journal([
                .event: "pairing-failed", .restoreID: "\(id)", .peripheral: "\(peripheral)", .error: "\(failure.name)", .errorMessage: "\(failure.message)",
            ]))
            throw failure
        }
        do {
            try await env.bluez.setTrusted(device, true)
        } catch {
            throw APIInterfaces.gattError(error, "setting Trusted after pairing")
        }
        env.logger.notice("peripheral paired and trusted", metadata: .journal([
            .event: "paired", .restoreID: "\(id)", .peripheral: "\(peripheral)", .duration: "\(ContinuousClock.now - started)",
        ]))
    }

    /// A failed `Device1.Pair` as the method error: the authentication
    /// errors (and the bound running out) are `AuthenticationFailed`.
    static func pairingError(_ error: any Error) -> RelinkError {
        let failure = FailureMapping.failure(error)
        let text = "Pair failed: \(failure.errorName)\(failure.message.isEmpty ? "" : ": \(failure.message)")"
        switch failure.errorName {
        case "org.bluez.Error.AuthenticationFailed", "org.bluez.Error.AuthenticationRejected", "org.bluez.Error.AuthenticationCanceled",
             "org.bluez.Error.AuthenticationTimeout", "org.bluez.Error.ConnectionAttemptFailed",
             "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.TimedOut":
            return .authenticationFailed(text)
        default:
            return APIInterfaces.gattError(error, "Pair")
        }
    }
}
