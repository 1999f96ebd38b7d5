public import BlueZ
public import DBus
public import RelinkModel

// A peripheral that rotates its address (resolvable private addresses), as
// bluetoothd shows it once paired (docs/real-bluez.md, "Third probe"; the
// bench's BlueZoo patch 27): the same Device1 shows the identity, and a
// restarted bluetoothd loads the bond under the identity.
extension FakeBlueZ {
    /// Pairing exchanged the peer's IRK: the device object found at the
    /// resolvable private address `rpa` now shows `identity` (`Address` and
    /// `AddressType` signalled on the same path, as bluetoothd's
    /// `device_update_addr`). The fake keeps the peripheral under `rpa`
    /// (its object path), so links, reads and notifications go on as before.
    public func showIdentity(_ rpa: BluetoothAddress, as identity: BluetoothAddress) {
        change(devicePath(rpa), BlueZInterface.device, [
            "Address": .string(identity.string), "AddressType": .string(identity.kind.rawValue),
        ])
    }

    /// bluetoothd restarts and loads every device whose identity it learnt
    /// (``showIdentity(_:as:)``) from its storage under that identity: a
    /// new object at `dev_<IDENTITY>`, bond and trust kept.
    public func restartBluetoothdUnderIdentities() {
        var identities: [BluetoothAddress: BluetoothAddress] = [:]
        for address in world.keys {
            guard let shown = mirror.device(devicePath(address)), let text = shown.address, text != address.string,
                  let identity = try? BluetoothAddress(parsing: text, kind: shown.addressType == "random" ? .random : .public)
            else { continue }
            identities[address] = identity
        }
        stopBluetoothd()
        for (rpa, identity) in identities {
            guard var peripheral = world.removeValue(forKey: rpa) else { continue }
            peripheral.address = identity
            world[identity] = peripheral
            if preKnown.remove(rpa) != nil { preKnown.insert(identity) }
            if pairing.bonds.remove(rpa) != nil { pairing.bonds.insert(identity) }
            if pairing.trusted.remove(rpa) != nil { pairing.trusted.insert(identity) }
            pairing.encrypted = Set(pairing.encrypted.map { $0.address == rpa ? Key(address: identity, service: $0.service, characteristic: $0.characteristic) : $0 })
        }
        startBluetoothd()
    }
}
