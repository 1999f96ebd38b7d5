import BlueZ
import DBus
import DaemonCore
import Logging
import RelinkModel
import Restoration

// The bond watch, carried out (the decisions: DaemonCore+Bonds.swift). The
// keys are in bluetoothd's storage; relinkd keeps per intent only whether
// its peripheral is bonded (store v11, Daemon+IntentBond.swift), so that a
// bond removed while it was away is seen at start-up.
extension Daemon {
    /// At start-up: what bluetoothd shows of each known peripheral's bond,
    /// beside what its intents stored (store v11).
    func seedBonds() async {
        let storedBonded = Set(known.intentBonds.filter(\.value.bonded).map(\.key.peripheral))
        var found: [DaemonCore<DaemonClock>.BondAtStart] = []
        let devices = await bluez.mirror.devicesByAddress(adapter: adapterPath)  // one pass, not one per peripheral
        for (peripheral, row) in known.peripherals {
            let device = devices[row.address.address.string]
            found.append(.init(peripheral: peripheral, bondedNow: device.map { $0.paired || $0.bonded },
                               storedBonded: storedBonded.contains(peripheral)))
        }
        await perform(core.handle(.bondsAtStart(found)))
    }

    /// A device object appeared: for a known peripheral, whether it is
    /// still bonded. A removed object is not a removed bond by itself (a
    /// bluetoothd restart removes every object and re-adds bonded ones as
    /// paired); an object that comes back unpaired is.
    func deviceAppeared(_ device: Device) async {
        guard device.adapter == adapterPath, let address = Self.address(of: device), let peripheral = peripheralID(for: address) else { return }
        await perform(core.handle(.bondObserved(peripheral, bonded: device.paired || device.bonded)))
    }

    /// `Paired` or `Bonded` went true on a device bluetoothd has removed
    /// since (the mirror runs ahead of the loop: `bluetoothctl remove` at
    /// once after a pairing). The bond still counts, in bus order, so that
    /// its removal is told when the device shows up again unpaired.
    func bondSignalled(onRemoved path: ObjectPath) async {
        guard path.parent == adapterPath, let address = Device.address(inPath: path), let peripheral = known.peripheralByAddress[address.uppercased()] else { return }
        await perform(core.handle(.bondObserved(peripheral, bonded: true)))
    }

    /// A bond removed outside relinkd: the journal, and a `bond-removed`
    /// event to each identifier with an intent on the peripheral.
    func bondRemoved(_ peripheral: PeripheralID, identifiers ids: [RestoreIdentifier]) async {
        var fields = deviceFields(peripheral)
        fields[JournalField.event.rawValue] = "bond-removed"
        fields[JournalField.identifiers.rawValue] = "\(ids.map(\.rawValue).joined(separator: ","))"
        logger.warning("bond removed outside relinkd: bluetoothd says the peripheral is no longer paired", metadata: fields)
        do {
            try await emit(.bondRemoved(peripheral: peripheral), to: ids)
        } catch {
            logger.error("bond-removed event not stored: \(error)")
        }
    }
}
