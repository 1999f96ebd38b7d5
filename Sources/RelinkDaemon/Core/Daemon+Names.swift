import BlueZ
import DBus
import Foundation
import Logging
import RelinkStore
import Restoration
import RelinkModel

// Names: each peripheral relink knows keeps its advertising and GAP name
// with when each was seen (in the store, so a restart does not report them
// again); a change raises `nameUpdated` for every identifier with an intent
// or a subscription on the peripheral, resolved by its preference.
extension Daemon {
    func nameSeen(device path: ObjectPath, gap: Bool, name: String) async {
        guard name.utf8.count <= PeripheralRecord.maximumNameBytes,
              let device = await bluez.mirror.device(path), device.adapter == adapterPath,
              let address = Self.address(of: device), let peripheral = peripheralID(for: address),
              var row = known.peripherals[peripheral] else { return }
        var names = known.peripheralNames[peripheral] ?? PeripheralNames(advertising: row.advertisingName, gap: row.gapName)
        let now = Date()
        let change = gap ? names.sawGAPName(name, at: now) : names.sawAdvertisingName(name, at: now)
        known.peripheralNames[peripheral] = names
        guard let change else { return }
        if gap { row.gapName = SeenName(name, seenAt: now) } else { row.advertisingName = SeenName(name, seenAt: now) }
        let interested = interestedIdentifiers(in: peripheral)
        do {
            var mutations: [StoreMutation] = [.putPeripheral(row)]
            for id in interested {
                let update = names.update(for: change, preferring: core.namePreferences[id] ?? .gapName)
                mutations.append(.appendEvent(try StoreMapping.draft(.nameUpdated(peripheral: peripheral, update: update), for: id)))
            }
            try await commit(mutations)
            known.peripherals[peripheral] = row
            peripheralChanged(peripheral)
            logger.info("name updated", metadata: .journal([
                .peripheral: "\(peripheral)", .event: "name-updated",
                .nameSource: "\(change.source.rawValue)", .name: "\(name)",
            ]))
        } catch {
            logger.error("cannot store a name", metadata: .journal([.peripheral: "\(peripheral)", .error: "\(error)"]))
        }
    }

    /// Gives the BlueZ mirror the names relinkd stored for its peripherals
    /// on its adapter, so that a `Name` bluetoothd shows after a restart is
    /// told apart against them rather than from nothing: bluetoothd's GAP
    /// name of a link it reports while the device shows disconnected stays
    /// the GAP name (real-bluez.md G14).
    func learnStoredNames() async {
        var names: [ObjectPath: DeviceNames] = [:]
        for row in known.peripherals.values where row.address.adapter == adapterName && (row.gapName != nil || row.advertisingName != nil) {
            guard let path = Device.path(of: row.address.address, on: adapterPath) else { continue }
            names[path] = DeviceNames(advertisingName: row.advertisingName?.value, advertisingNameSeen: row.advertisingName?.seenAt,
                                      gapName: row.gapName?.value, gapNameSeen: row.gapName?.seenAt)
        }
        guard !names.isEmpty else { return }
        await bluez.learnNames(names)
    }
}
