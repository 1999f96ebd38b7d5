public import BlueZ
public import DBus
public import RelinkModel

/// What the fake bluetoothd stores of pairings: bonds and trust outlive
/// links and bluetoothd restarts (they are in its storage), as measured on
/// real bluetoothd (`docs/real-bluez.md`, "Third probe").
struct FakePairing: Sendable {
    /// Bonded devices (`Paired` and `Bonded`).
    var bonds: Set<BluetoothAddress> = []
    /// Devices with `Trusted` set.
    var trusted: Set<BluetoothAddress> = []
    /// The error the next `Pair` of a device answers, set by the test.
    var refusals: [BluetoothAddress: BlueZError] = [:]
    /// Characteristics that need an encrypted link (a bond): read, write
    /// and notify are refused without one.
    var encrypted: Set<FakeBlueZ.Key> = []
    /// What a peripheral asks of the central's agent before it pairs
    /// (``FakeBlueZ/demand(_:_:passkey:)``).
    var demands: [BluetoothAddress: FakeBlueZ.AgentDemand] = [:]
    /// The handler of the first agent exported: as on a real connection, the
    /// agent object is exported once and keeps it (``PairingAgent``).
    var exported: AgentRequestHandler?
    /// Whether a refusal for want of encryption makes the fake pair by
    /// itself instead (``FakeBlueZ/pairByItselfWhenEncryptionIsRefused()``).
    var pairsByItself = false
}

// Pairing, Just Works: `Device1.Pair` through the central's agent, and
// `Device1.Trusted`.
extension FakeBlueZ {
    /// `Device1.Pair`: bonds a connected device (`Paired` and `Bonded`
    /// signalled); "already paired" is success, as relinkd's BlueZ layer
    /// maps it.
    /// - Throws: ``BlueZError``: the refusal a test set
    ///   (``refuseNextPairing(_:_:)``); `NotConnected` without a link
    ///   (the fake does not connect for a pairing, bluetoothd would).
    public func pair(_ device: ObjectPath, agent: PairingAgent, timeout: Duration) async throws {
        let address = try address(of: device)
        calls.append(.pair(address.string, agent: agent.path))
        try requireBluetoothd()
        if let refusal = pairing.refusals.removeValue(forKey: address) { throw refusal }
        guard connected.contains(address) else { throw BlueZError(name: "org.bluez.Error.NotConnected", message: "Not Connected") }
        if !pairing.bonds.contains(address) { try await askAgent(device, address, agent) }
        guard pairing.bonds.insert(address).inserted else { return }
        change(device, BlueZInterface.device, ["Paired": .boolean(true), "Bonded": .boolean(true)])
    }

    /// Sets `Device1.Trusted` (stored, signalled when it changes).
    public func setTrusted(_ device: ObjectPath, _ trusted: Bool) async throws {
        let address = try address(of: device)
        calls.append(.setTrusted(address.string, trusted))
        try requireBluetoothd()
        let changed = trusted ? pairing.trusted.insert(address).inserted : pairing.trusted.remove(address) != nil
        if changed { change(device, BlueZInterface.device, ["Trusted": .boolean(trusted)]) }
    }

    /// The next `Pair` of `address` fails with BlueZ's `name` (e.g.
    /// `org.bluez.Error.AuthenticationFailed`).
    public func refuseNextPairing(_ address: BluetoothAddress, _ name: String) {
        pairing.refusals[address] = BlueZError(name: name, message: "refused by the test")
    }

    /// From now on the peripheral at `address` refuses to read, write or
    /// notify the characteristic over a link that is not encrypted (no
    /// bond), with ATT Insufficient Encryption, which BlueZ's central
    /// reports as `org.bluez.Error.NotPermitted` "Not paired"
    /// (`src/gatt-client.c`, `create_gatt_dbus_error`).
    public func requireEncryption(_ address: BluetoothAddress, service: BluetoothUUID, characteristic: BluetoothUUID) {
        pairing.encrypted.insert(Key(address: address, service: service, characteristic: characteristic))
    }

    /// Throws BlueZ's refusal when `key` needs a bond that is not there.
    func requireBondIfEncrypted(_ key: Key) throws {
        guard pairing.encrypted.contains(key), !pairing.bonds.contains(key.address) else { return }
        if pairing.pairsByItself, connected.contains(key.address) { return bondByItself(key.address) }
        throw BlueZError(name: "org.bluez.Error.NotPermitted", message: "Not paired")
    }

    /// Whether a notify session's values flow: its peripheral is linked and,
    /// for a characteristic that needs encryption, bonded (bluetoothd
    /// encrypts a bonded link as it comes up and re-arms the session; an
    /// unbonded one's CCCD write is refused, which no client is told of).
    func sessionArmed(_ key: Key) -> Bool {
        sessions.contains(key) && connected.contains(key.address)
            && (!pairing.encrypted.contains(key) || pairing.bonds.contains(key.address))
    }

    /// `Adapter1.RemoveDevice`: the keys, trust and device object go.
    public func removeDevice(_ device: ObjectPath, from adapter: ObjectPath) async throws {
        let address = try address(of: device)
        calls.append(.removeDevice(address.string))
        try requireBluetoothd()
        removeBond(address)
    }

    /// `bluetoothctl remove`: bluetoothd forgets the keys and trust and
    /// removes the device object (the link goes with it); the device is
    /// added again, unpaired, at its next advertisement.
    public func removeBond(_ address: BluetoothAddress) {
        pairing.bonds.remove(address)
        pairing.trusted.remove(address)
        removeDeviceObject(address)
    }

    /// Whether bluetoothd has a bond with `address`.
    public func isBonded(_ address: BluetoothAddress) -> Bool { pairing.bonds.contains(address) }

    /// Whether bluetoothd has `address` trusted.
    public func isTrusted(_ address: BluetoothAddress) -> Bool { pairing.trusted.contains(address) }
}
