import BlueZ
import DBus
import Logging
import RelinkModel
import Restoration

// A bond removed behind relinkd's back (issue 24): someone ran `bluetoothctl
// remove` (bluetoothd removes the device object and its keys; relinkd sees
// it when the device object comes back, unpaired, at its next
// advertisement) or the peripheral's `Paired` went false. The keys are in
// bluetoothd's storage; relinkd keeps per intent only whether its
// peripheral is bonded (store v11, Daemon+IntentBond.swift), so that a bond
// removed while it was away is seen at start-up. It watches which known
// peripherals bluetoothd has bonded and, when one stops being bonded, tells every
// identifier with an intent on it once (`bond-removed`) and journals it.
// It does not pair again by itself: the intent's next operation that needs
// encryption pairs on demand, once, if the intent allows it; the intent
// keeps reconnecting as before (a lost link is retried by its strategies,
// never faster because of the bond).
extension Daemon {
    /// Notes whether bluetoothd has the peripheral bonded now (`Paired` or
    /// `Bonded`); a bond that was there and is gone is reported.
    func bondSeen(_ peripheral: PeripheralID, device: Device) async {
        if device.paired || device.bonded {
            known.bonded.insert(peripheral)
            await noteBond(of: peripheral) { $0.bonded = true }
        } else if known.bonded.contains(peripheral) {
            await bondRemoved(peripheral, why: "bluetoothd says the peripheral is no longer paired")
        }
    }

    /// At start-up: the known peripherals bluetoothd has bonded now, and
    /// those an intent stored as bonded (store v11): a bond removed while
    /// relinkd was away is reported when the device is (or shows up again)
    /// unpaired.
    func seedBonds() async {
        let storedBonded = Set(known.intentBonds.filter(\.value.bonded).map(\.key.peripheral))
        for (peripheral, row) in known.peripherals {
            let device = await bluez.mirror.device(address: row.address.address.string, adapter: adapterPath)
            if let device, device.paired || device.bonded {
                known.bonded.insert(peripheral)
            } else if storedBonded.contains(peripheral) {
                known.bonded.insert(peripheral)
                if let device { await bondSeen(peripheral, device: device) }
            }
        }
    }

    /// A device object appeared: for a known peripheral, whether it is
    /// still bonded. A removed object is not a removed bond by itself (a
    /// bluetoothd restart removes every object and re-adds bonded ones as
    /// paired); an object that comes back unpaired is.
    func deviceAppeared(_ device: Device) async {
        guard device.adapter == adapterPath, let address = Self.address(of: device), let peripheral = peripheralID(for: address) else { return }
        await bondSeen(peripheral, device: device)
    }

    private func bondRemoved(_ peripheral: PeripheralID, why: String) async {
        known.bonded.remove(peripheral)
        await noteBond(of: peripheral) { $0.bonded = false }
        let ids = core.machines.keys.filter { $0.peripheral == peripheral }.map(\.identifier).sorted()
        var fields = deviceFields(peripheral)
        fields[JournalField.event.rawValue] = "bond-removed"
        fields[JournalField.identifiers.rawValue] = "\(ids.map(\.rawValue).joined(separator: ","))"
        logger.warning("bond removed outside relinkd: \(why)", metadata: fields)
        do {
            try await emit(.bondRemoved(peripheral: peripheral), to: ids)
        } catch {
            logger.error("bond-removed event not stored: \(error)")
        }
    }
}
