public import BlueZ
public import DBus
public import RelinkModel

// A peripheral that pairs only with a passkey or numeric comparison: the
// fake bluetoothd asks the pairing caller's agent (its handler) as
// bluetoothd would, and pairs only on the right answer (issue 24, pair3).
extension FakeBlueZ {
    /// What a peripheral demands of the central's agent, and the passkey
    /// that passes.
    public struct AgentDemand: Sendable, Hashable {
        /// The request made of the agent.
        public var request: AgentRequest
        /// For ``AgentRequest/passkey``: the passkey the peripheral shows.
        public var passkey: UInt32?
    }

    /// From now on pairing with `address` makes bluetoothd ask the agent
    /// `request` (`passkey`: what a typed passkey must be). An agent
    /// registered `NoInputNoOutput` cannot answer it: the pairing fails
    /// with `AuthenticationFailed`, as SMP's method selection would.
    public func demand(_ address: BluetoothAddress, _ request: AgentRequest, passkey: UInt32? = nil) {
        pairing.demands[address] = AgentDemand(request: request, passkey: passkey)
    }

    /// Asks `agent` what the peripheral demands; throws BlueZ's error for a
    /// refusal, a cancel or a wrong passkey.
    func askAgent(_ device: ObjectPath, _ address: BluetoothAddress, _ agent: PairingAgent) async throws {
        if pairing.exported == nil { pairing.exported = agent.handler }
        guard let demand = pairing.demands[address] else { return }
        guard agent.capability != .noInputNoOutput else {
            throw BlueZError(name: "org.bluez.Error.AuthenticationFailed", message: "the peripheral needs a passkey or a confirmation")
        }
        let answer = await (pairing.exported ?? agent.handler)(device, demand.request)
        switch (demand.request, answer) {
        case (.passkey, .passkey(let typed)) where typed == demand.passkey:
            return
        case (.confirmation, .accept), (.authorization, .accept), (.displayPasskey, .accept), (.pinCode, .pinCode):
            return
        case (_, .cancel):
            throw BlueZError(name: "org.bluez.Error.AuthenticationCanceled", message: "Authentication Canceled")
        default:
            throw BlueZError(name: "org.bluez.Error.AuthenticationRejected", message: "Authentication Rejected")
        }
    }
}
