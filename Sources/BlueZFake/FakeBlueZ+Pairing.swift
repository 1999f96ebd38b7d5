import BlueZ
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
    public func pair(_ device: ObjectPath, agent: ObjectPath, timeout: Duration) async throws {
        let address = try address(of: device)
        calls.append(.pair(address.string, agent: agent))
        try requireBluetoothd()
        if let refusal = pairing.refusals.removeValue(forKey: address) { throw refusal }
        guard connected.contains(address) else { throw BlueZError(name: "org.bluez.Error.NotConnected", message: "Not Connected") }
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

    /// Whether bluetoothd has a bond with `address`.
    public func isBonded(_ address: BluetoothAddress) -> Bool { pairing.bonds.contains(address) }

    /// Whether bluetoothd has `address` trusted.
    public func isTrusted(_ address: BluetoothAddress) -> Bool { pairing.trusted.contains(address) }
}
