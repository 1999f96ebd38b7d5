import BlueZ
import DBus
import Logging
import RelinkModel
import RelinkStore
import Restoration

// A peripheral that rotates its address (resolvable private addresses) and
// was paired: bluetoothd learnt its identity address with its IRK and shows
// it on the same Device1. relinkd follows the device there and keeps the
// identity, which bluetoothd resolves every later address of the peer to.
extension Daemon {
    /// bluetoothd changed a device's `Address` (and `AddressType`) on the
    /// same object: a known peripheral's resolvable private address was
    /// resolved to its identity by pairing. The peripheral keeps its
    /// ``PeripheralID``; its stored address becomes the identity (the row
    /// at once, by the core's ``AddressTakeover``), and each of its
    /// intents' machines follows the device (``ConnectionStateMachine/addressResolved(from:to:)``),
    /// so that the known-identifier strategy, background auto-connect and
    /// a scan's address rule find it again after the peer rotates its
    /// address or bluetoothd restarts, without the match rule.
    func deviceAddressChanged(_ device: Device, old: DBusValue?) async {
        guard case .string(let oldText)? = old, let identity = Self.address(of: device),
              let peripheral = known.peripheralByAddress[oldText.uppercased()],
              var row = known.peripherals[peripheral], row.address.address != identity,
              let stored = try? StoreMapping.deviceAddress(identity, adapter: adapterName) else { return }
        let before = row.address.address
        var retired: PeripheralID?
        guard takeOverAddress(identity, for: peripheral, retiring: &retired) else { return }
        logger.notice("bluetoothd resolved the peripheral's private address \(before.string) to its identity; relinkd follows it there", metadata: .journal([
            .peripheral: "\(peripheral)", .address: "\(identity.string)", .decision: "identity-resolved",
        ]))
        known.peripheralByAddress[before.string] = nil
        row.address = stored
        known.peripherals[peripheral] = row
        known.peripheralByAddress[identity.string] = peripheral
        var mutations: [StoreMutation] = [.putPeripheral(row)]
        if let retired { mutations.insert(.removePeripheral(retired), at: 0) }
        do { try await commit(mutations) } catch {
            logger.error("cannot store the peripheral's identity address", metadata: .journal([
                .peripheral: "\(peripheral)", .address: "\(identity.string)", .error: "\(error)",
            ]))
        }
        if let retired {
            for uid in api.discoveredBy.keys { api.discoveredBy[uid]?.remove(retired) }
            refreshViewers(of: retired)
        }
        let bonded = device.paired || device.bonded
        await noteBond(of: peripheral) {
            $0.identityAddress = true
            if bonded { $0.bonded = true }
        }
        for intent in intents(of: peripheral) { await feed(intent, .addressResolved(from: before, to: identity)) }
        refreshViewers(of: peripheral)
    }
}
