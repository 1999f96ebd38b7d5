import BlueZ
import DBus
import Logging
import RelinkAPI
import RelinkModel
import Restoration

// `Central1.Pair` (docs/api/Central1.md): issue 24, the central side, Just
// Works. The loop checks the call and names the device; the pairing itself
// runs outside the loop (it can take seconds), then the device is trusted
// so that bluetoothd's background auto-connect takes it. The bond lives in
// bluetoothd's storage: relinkd stores nothing of it and reads
// `Paired`/`Bonded`/`Trusted` back from BlueZ (Peripheral1). Pairing on
// demand (Daemon+PairingOnDemand.swift) goes through the same steps.
extension Daemon {
    /// Where relinkd's own `org.bluez.Agent1` (``PairingAgent``) is exported.
    static let agentPath: ObjectPath = {
        do { return try ObjectPath("/org/relink/agent") } catch { preconditionFailure("constant path") }
    }()
    /// The bound on BlueZ's `Device1.Pair`.
    static let pairingTimeout: Duration = .seconds(30)

    /// What a pairing needs from the loop: the device, whether the intent
    /// lets relinkd pair on demand, and the agent capability it pairs with
    /// (`Connect`'s `pairing_capability`).
    struct PairingTarget: Sendable {
        var device: ObjectPath
        var peripheral: String
        var onDemand: Bool
        var capability: AgentCapability = .noInputNoOutput
    }

    /// The loop's part of `Pair`: the identifier must have a connection
    /// intent on the peripheral, and the peripheral a link; replies the
    /// device's BlueZ object, the peripheral's UUID, whether the intent
    /// pairs on demand and its pairing capability.
    /// - Throws: `UnknownPeripheral`, `NotConnected`.
    func pairTarget(_ id: RestoreIdentifier, _ ref: PeripheralRef) async throws(RelinkError) -> APIResult {
        let peripheral = try knownPeripheral(ref)
        guard let machine = core.machines[ConnectionIntentID(identifier: id, peripheral: peripheral)] else {
            throw RelinkError(.unknownPeripheral, "\(id) has no connection intent on \(ref): Connect first")
        }
        guard let device = await linkedDevice(of: peripheral) else { throw RelinkError(.notConnected, "\(ref) has no link to pair over") }
        return APIResult(values: [.objectPath(device.path), .string(peripheral.description), .boolean(machine.options.pairOnDemand),
                                  .string(machine.options.pairingCapability.rawValue)])
    }

    /// ``pairTarget(_:_:)`` asked of the loop.
    nonisolated func pairingTarget(_ id: RestoreIdentifier, _ ref: PeripheralRef, from caller: APICaller) async throws(RelinkError) -> PairingTarget {
        let values = try await submit(.pairTarget(id, ref), from: caller).get().values
        guard case .objectPath(let device)? = values.first else { throw RelinkError(.failed, "the device could not be located") }
        let peripheral = values.dropFirst().first.map { if case .string(let s) = $0 { s } else { "\(ref)" } } ?? "\(ref)"
        var onDemand = false
        if case .boolean(let b)? = values.dropFirst(2).first { onDemand = b }
        var capability = AgentCapability.noInputNoOutput
        if case .string(let name)? = values.dropFirst(3).first, let named = AgentCapability(rawValue: name) { capability = named }
        return PairingTarget(device: device, peripheral: peripheral, onDemand: onDemand, capability: capability)
    }

    /// `Central1.Pair` (`capability` nil: the intent's `pairing_capability`)
    /// and `PairWith`: checked by the loop, then paired (``pairDevice(_:_:capability:why:)``);
    /// `started` runs once the loop found the target, before the pairing
    /// (which may wait for the caller's `AnswerPairing`).
    /// - Throws: as ``pairTarget(_:_:)``, and `AuthenticationFailed`,
    ///   `NotConnected`, `InProgress`, `NotReady`, `Failed` from BlueZ.
    nonisolated func pair(_ id: RestoreIdentifier, _ ref: PeripheralRef, capability: AgentCapability? = nil,
                          from caller: APICaller, started: (@Sendable () -> Void)? = nil) async throws(RelinkError) {
        let target = try await pairingTarget(id, ref, from: caller)
        started?()
        try await pairDevice(id, target, capability: capability ?? target.capability, why: capability == nil ? "Pair" : "PairWith")
    }

    /// `Device1.Pair` through relinkd's agent registered with `capability`
    /// (nil: the target's, the intent's choice; bounded by
    /// ``pairingTimeout``), then `Trusted = true`; one pairing of a device
    /// at a time (a second asker gets the first one's outcome). Journals
    /// `paired` or `pairing-failed`; `why` names what asked for it.
    /// - Throws: `AuthenticationFailed`, `NotConnected`, `InProgress`,
    ///   `NotReady`, `Failed`.
    nonisolated func pairDevice(_ id: RestoreIdentifier, _ target: PairingTarget, capability: AgentCapability? = nil,
                                why: String) async throws(RelinkError) {
        let capability = capability ?? target.capability
        let bluez = env.bluez, logger = env.logger, broker = env.pairingRequests
        let failure = await env.pairings.pair(target.device) { () async -> RelinkError? in
            let started = ContinuousClock.now
            let peripheral = (try? PeripheralID(parsing: target.peripheral)) ?? PeripheralID()
            let replacing = await broker.begin(target.device, .init(id: id, peripheral: peripheral, capability: capability), capability: capability)
            let agent = PairingAgent(path: Self.agentPath, capability: capability, replacing: replacing) { device, request in
                await self.agentRequest(device, request)
            }
            do {
                try await bluez.pair(target.device, agent: agent, timeout: Self.pairingTimeout)
                _ = await broker.end(target.device)
            } catch {
                let failure = await broker.end(target.device)
                    ? RelinkError(.authenticationFailed, "Pair failed: the pairing request was not answered within \(Self.pairingAnswerBound)")
                    : Self.pairingError(error)
                logger.warning("pairing failed", metadata: .journal([
                    .event: "pairing-failed", .restoreID: "\(id)", .peripheral: "\(target.peripheral)", .decision: "\(why)",
                    .error: "\(failure.name)", .errorMessage: "\(failure.message)",
                ]))
                return failure
            }
            do {
                try await bluez.setTrusted(target.device, true)
            } catch {
                return APIInterfaces.gattError(error, "setting Trusted after pairing")
            }
            logger.notice("peripheral paired and trusted", metadata: .journal([
                .event: "paired", .restoreID: "\(id)", .peripheral: "\(target.peripheral)", .decision: "\(why)",
                .duration: "\(ContinuousClock.now - started)",
            ]))
            return nil
        }
        if let failure { throw failure }
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
            return RelinkError(.authenticationFailed, text)
        default:
            return APIInterfaces.gattError(error, "Pair")
        }
    }
}

/// One pairing per device at a time: a read, a write and a subscription
/// refused together for want of encryption, or a `Pair` meanwhile, share
/// one `Device1.Pair` and its outcome instead of each starting one (which
/// BlueZ would answer `InProgress`).
actor PairingGate {
    private var running: [ObjectPath: Task<RelinkError?, Never>] = [:]

    /// Runs `body` for `device`, or waits for the run under way; returns
    /// its failure, nil when it paired.
    func pair(_ device: ObjectPath, _ body: @escaping @Sendable () async -> RelinkError?) async -> RelinkError? {
        if let task = running[device] { return await task.value }
        let task = Task { await body() }
        running[device] = task
        let outcome = await task.value
        running[device] = nil
        return outcome
    }

    /// Whether a pairing of `device` by relinkd is under way.
    func isPairing(_ device: ObjectPath) -> Bool { running[device] != nil }
}
