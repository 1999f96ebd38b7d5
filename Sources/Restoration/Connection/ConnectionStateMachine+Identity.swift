public import RelinkModel

// A resolvable private address resolved to the peripheral's identity.
extension ConnectionStateMachine {
    /// bluetoothd now shows the peripheral's device at its identity
    /// address: pairing exchanged the peer's IRK, and BlueZ changes
    /// `Address`/`AddressType` on the same `Device1` (from the resolvable
    /// private address the intent knew). The machine keeps its state and
    /// follows the device: every address it holds that was `old` becomes
    /// `identity` (the stored address, the link, a held background
    /// auto-connect), and the record is stored again with it. Later
    /// rotations of the peer's address are resolved by bluetoothd to that
    /// identity, so the known-identifier strategy and auto-connect find it
    /// without the match rule.
    public mutating func addressResolved(from old: BluetoothAddress, to identity: BluetoothAddress) -> [Action] {
        guard old != identity, knownAddress == old || holds(old) else { return [log(.ignored(input: "addressResolved"))] }
        func follow(_ address: BluetoothAddress) -> BluetoothAddress { address == old ? identity : address }
        var actions: [Action] = []
        if knownAddress == old { knownAddress = identity }
        if var own = ownConnect {
            own.address = follow(own.address)
            ownConnect = own
        }
        switch state {
        case .connecting(let a, let route): state = .connecting(follow(a), route)
        case .waitingForServices(let a, let route): state = .waitingForServices(follow(a), route)
        case .connected(let a, let route): state = .connected(follow(a), route)
        case .sharing(let owner, let link?): state = .sharing(owner: owner, link: follow(link))
        case .backingOff(let until, .autoConnect(let a)): state = .backingOff(until: until, background: .autoConnect(follow(a)))
        default: break
        }
        if backgroundAutoConnect == old {
            actions.append(.stopBackgroundAutoConnect(old))
            backgroundAutoConnect = identity
            actions.append(.useBackgroundAutoConnect(identity))
            actions.append(log(.backgroundAutoConnect(identity)))
        }
        if let phase = storedPhase { actions.append(.persist(record(phase))) }
        return actions
    }

    /// Whether the machine's state or held auto-connect names `address`.
    private func holds(_ address: BluetoothAddress) -> Bool {
        switch state {
        case .connecting(let a, _), .waitingForServices(let a, _), .connected(let a, _): if a == address { return true }
        case .sharing(_, let link?): if link == address { return true }
        case .backingOff(_, .autoConnect(let a)): if a == address { return true }
        default: break
        }
        return backgroundAutoConnect == address || ownConnect?.address == address
    }

    /// The record to store for the current state (nil once cancelled or
    /// failed: stored then already).
    public var currentRecord: ConnectionIntentRecord? { storedPhase.map(record) }

    /// The phase to store for the current state (nil: terminal, stored already).
    private var storedPhase: ConnectionIntentRecord.Phase? {
        switch state {
        case .connected, .sharing(_, _?): .connected
        case .idle: .idle
        case .failed, .cancelled: nil
        default: .pending
        }
    }
}
