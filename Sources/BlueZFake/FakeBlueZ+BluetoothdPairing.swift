import BlueZ
import DBus
import RelinkModel

// Real bluetoothd 5.66 pairs by itself when the peripheral refuses an
// operation for insufficient encryption (`src/shared/att.c`,
// `change_security`: the link's security is raised and the operation
// retried): the caller sees no refusal, the device turns `Paired` and
// `Bonded`, and nothing sets `Trusted` (docs/real-bluez.md, difference 30).
extension FakeBlueZ {
    /// From now on a read, write or subscription refused for want of
    /// encryption makes the fake bond with the peripheral by itself
    /// (`Paired`, `Bonded` signalled, no `Device1.Pair` call, no agent
    /// asked) and succeed, as bluetoothd 5.66 does.
    public func pairByItselfWhenEncryptionIsRefused() {
        pairing.pairsByItself = true
    }

    /// bluetoothd's own pairing of a linked device.
    func bondByItself(_ address: BluetoothAddress) {
        guard pairing.bonds.insert(address).inserted else { return }
        change(devicePath(address), BlueZInterface.device, ["Paired": .boolean(true), "Bonded": .boolean(true)])
    }
}
