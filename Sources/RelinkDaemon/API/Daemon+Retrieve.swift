import BlueZ
import DBus
import RelinkAPI
import RelinkModel

// `Central1.RetrievePeripherals` and `RetrieveConnectedPeripherals` (issue 35
// item 2; docs/api/Central1.md): CoreBluetooth's
// `retrievePeripheralsWithIdentifiers:` and
// `retrieveConnectedPeripheralsWithServices:`. Neither starts anything: a
// program that finds its peripheral connected (by another program too) adopts
// the link with `Connect` and the `already-connected` strategy.
extension Daemon {
    /// The peripherals relinkd knows among `refs` that the caller may name
    /// (docs/api/access.md: used or discovered by one of its identifiers
    /// since relinkd started, or any for root), in the order named, each
    /// once; the others are left out, as CoreBluetooth leaves out
    /// identifiers it does not know.
    func retrievePeripherals(_ id: RestoreIdentifier, _ refs: [PeripheralRef], for caller: APICaller) async -> APIResult {
        var seen = Set<PeripheralID>(), entries: [DBusValue] = []
        for ref in refs {
            guard let peripheral = try? knownPeripheral(ref), mayName(peripheral, caller), seen.insert(peripheral).inserted else { continue }
            entries.append(retrieved(peripheral, device: await knownDevice(of: peripheral), for: id))
        }
        return APIResult(values: [.array(Self.retrievedEntryType, entries)])
    }

    /// The devices bluetoothd shows connected on relinkd's adapter, by any
    /// program, whose services include one of `services`, sorted by
    /// address. Each becomes a peripheral relinkd knows (stored, as a
    /// discovery makes it) and the caller's identifier may name it from now
    /// on, as if its scan had discovered it.
    /// - Throws: `InvalidArguments` when `services` is empty.
    func retrieveConnectedPeripherals(_ id: RestoreIdentifier, _ services: Set<BluetoothUUID>) async throws(RelinkError) -> APIResult {
        guard !services.isEmpty else { throw RelinkError(.invalidArguments, "services must name at least one service UUID") }
        let devices = await bluez.mirror.connectedDevices.compactMap { device -> (BluetoothAddress, Device)? in
            guard device.adapter == adapterPath, !device.serviceUUIDs.isDisjoint(with: services),
                  let address = Self.address(of: device) else { return nil }
            return (address, device)
        }
        var entries: [DBusValue] = []
        for (address, device) in devices.sorted(by: { $0.0.string < $1.0.string }) {
            let peripheral = await knownPeripheral(for: address, services: device.serviceUUIDs)
            discovered(peripheral, by: id)
            entries.append(retrieved(peripheral, device: device, for: id))
        }
        return APIResult(values: [.array(Self.retrievedEntryType, entries)])
    }

    /// Whether `caller` may name `peripheral` (docs/api/access.md): root
    /// any; a user one of their identifiers uses or used since relinkd
    /// started, or discovered.
    func mayName(_ peripheral: PeripheralID, _ caller: APICaller) -> Bool {
        caller.isRoot || api.usedBy[caller.uid, default: []].contains(peripheral)
            || api.discoveredBy[caller.uid, default: []].contains(peripheral)
    }

    /// The D-Bus type of one retrieved peripheral.
    static let retrievedEntryType = DBusType.dictionary(key: .string, value: .variant)

    /// One retrieved peripheral: its object, id, address, the name the
    /// identifier's rule resolves, whether bluetoothd shows it connected
    /// now (`device`: its BlueZ object, if any), and the services known for it.
    private func retrieved(_ peripheral: PeripheralID, device: Device?, for id: RestoreIdentifier) -> DBusValue {
        let row = known.peripherals[peripheral]
        let services = Set(row?.serviceUUIDs ?? []).union(device?.serviceUUIDs ?? [])
        let preference = core.namePreferences[id] ?? .gapName
        return Self.dict([
            "object": .objectPath(APIPath.peripheral(peripheral)), "id": .string(peripheral.description),
            "address": .string(row?.address.address.string ?? ""),
            "name": .string(names(of: peripheral).resolved(preferring: preference)?.name ?? ""),
            "connected": .boolean(device?.connected ?? false),
            "services": .array(.string, services.sorted().map { .string($0.string) }),
        ])
    }
}
