import BlueZ
import DBus
import Logging
import RelinkModel
import Restoration

// Real bluetoothd 5.66 pairs by itself (docs/real-bluez.md, "Pairing on real
// bluetoothd", difference 30): when a read, a write or a CCCD write is
// refused for insufficient encryption or authentication, its ATT layer
// raises the link's security and retries (`src/shared/att.c`,
// `change_security`, "Retrying operation"), so the kernel pairs (Just
// Works) and the call succeeds. relinkd never sees a refusal, so pairing on
// demand (Daemon+PairingOnDemand.swift) never runs and nothing set `Trusted`.
// relinkd therefore marks a peripheral trusted whenever bluetoothd reports
// it newly paired (`Paired` turning true: `Bonded` follows in a change of its
// own, which would trust it a second time) while an intent of relinkd's is on it and
// relinkd's own pairing (which trusts it itself) is not under way; the
// journal says `paired` with the decision `bluetoothd`.
extension Daemon {
    /// `Paired` turned true on a device: trust it if relinkd has
    /// an intent on the peripheral and did not start the pairing itself.
    func pairedByBluetoothd(_ peripheral: PeripheralID, device: Device) {
        guard device.paired || device.bonded, !device.trusted else { return }
        let ids = core.machines.keys.filter { $0.peripheral == peripheral }.map(\.identifier.rawValue).sorted()
        guard !ids.isEmpty else { return }
        let bluez = self.bluez, logger = self.logger, gate = env.pairings
        var fields = deviceFields(peripheral)
        fields[JournalField.event.rawValue] = "paired"
        fields[JournalField.decision.rawValue] = "bluetoothd"
        fields[JournalField.identifiers.rawValue] = "\(ids.joined(separator: ","))"
        let metadata = fields
        loop.spawned.append {
            // relinkd's own Pair sets Trusted when it returns.
            guard await !gate.isPairing(device.path) else { return [] }
            do {
                try await bluez.setTrusted(device.path, true)
                logger.notice("peripheral paired by bluetoothd, now trusted", metadata: metadata)
            } catch {
                var failed = metadata
                failed[JournalField.error.rawValue] = "\(error)"
                logger.warning("setting Trusted after bluetoothd's pairing failed", metadata: failed)
            }
            return []
        }
    }
}
