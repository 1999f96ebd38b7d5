import BlueZ
import DBus
import Foundation
import Logging
import RelinkAPI
import RelinkModel
import RelinkStore
import Restoration

// The GATT database of each wanted peripheral: read from bluetoothd's
// objects once they have settled after a change, kept in the store,
// compared for `services-changed`, handed out by `Central1.GattDatabase`
// and in `Register`'s restored state; descriptors located for reads and
// writes.
extension Daemon {
    /// How long a device's GATT objects must stay still before relinkd
    /// reads its database: bluetoothd adds them one object at a time (real
    /// bluetoothd 5.66 even signals `ServicesResolved` before the
    /// characteristics), and a database read half-way would be reported as
    /// a change twice.
    static let gattSettleTime: Duration = .milliseconds(250)

    /// A GATT object appeared or left at `path`: its device's database is
    /// read again once its objects are still.
    func gattObjectsMoved(containing path: ObjectPath) async {
        guard let device = await bluez.mirror.devicePath(containing: path) else { return }
        await gattObjectsMoved(device: device)
    }

    /// The device's GATT objects (or its `ServicesResolved`) changed: for a
    /// known peripheral linked with services resolved, the core decides
    /// whether and when its database is read (DaemonCore+GattDatabase.swift).
    func gattObjectsMoved(device path: ObjectPath) async {
        guard let device = await bluez.mirror.device(path), device.adapter == adapterPath, device.connected, device.servicesResolved,
              let address = Self.address(of: device), let peripheral = peripheralID(for: address) else { return }
        queue(core.handle(.gattObjectsMoved(peripheral)))
    }

    /// After start-up and after bluetoothd restarted: links already up with
    /// services resolved get no `ServicesResolved` change, so their
    /// databases are read now.
    func readResolvedDatabases() async {
        let interested = core.interestedPeripherals  // in one pass: per peripheral it was quadratic at start-up
        let devices = await bluez.mirror.devicesByAddress(adapter: adapterPath)  // likewise
        for (peripheral, row) in known.peripherals.sorted(by: { $0.key < $1.key }) where interested.contains(peripheral) {
            guard let device = devices[row.address.address.string], device.connected, device.servicesResolved else { continue }
            await gattObjectsMoved(device: device.path)
        }
    }

    /// Reads the peripheral's database from bluetoothd's objects when its
    /// link is up with services resolved, for the core to weigh.
    func readGattDatabase(_ peripheral: PeripheralID) async {
        guard let device = await linkedDevice(of: peripheral), device.servicesResolved else { return }
        let database = await bluez.mirror.gattDatabase(of: device.path, readAt: Date())
        await perform(core.handle(.gattDatabaseRead(peripheral, database)))
    }

    /// Stores a database read, with a `services-changed` event to each of
    /// `identifiers` when its layout changed (`identifiers` nil: none), in
    /// one gathered commit.
    func storeGattDatabase(_ peripheral: PeripheralID, _ database: GattDatabase, changedFor identifiers: [RestoreIdentifier]?) {
        let put = StoreMutation.putGattDatabase(peripheral, database)
        let fields: Logger.Metadata = .journal([
            .peripheral: "\(peripheral)", .count: "\(database.services.count)",
            .gattServices: "\(database.services.map(\.uuid.string).joined(separator: ","))",
        ])
        guard let identifiers else {
            logger.debug("GATT database read", metadata: fields)
            enqueueGathered(RestoreBatch.Request(mutations: [put]))
            return
        }
        logger.notice("the peripheral's GATT database changed", metadata: fields.merging(.journal([.event: "services-changed"])) { $1 })
        do {
            var request = try Self.eventRequest(.servicesChanged(peripheral: peripheral, database: database), to: identifiers)
            request.mutations.insert(put, at: 0)
            enqueueGathered(request)
        } catch {
            logger.error("cannot send services-changed", metadata: .journal([.peripheral: "\(peripheral)", .error: "\(error)"]))
            enqueueGathered(RestoreBatch.Request(mutations: [put]))
        }
    }

    // MARK: The API

    /// `Central1.GattDatabase`: the live database of a peripheral the
    /// identifier has a connection intent on, read from bluetoothd's
    /// objects now. No waiting: before services are resolved it is
    /// `ServicesNotResolved` (the `connected` event comes once they are).
    func liveGattDatabase(_ id: RestoreIdentifier, _ ref: PeripheralRef) async throws(RelinkError) -> GattDatabase {
        let peripheral = try knownPeripheral(ref)
        guard core.machines[ConnectionIntentID(identifier: id, peripheral: peripheral)] != nil else {
            throw RelinkError(.unknownPeripheral, "\(id) has no connection intent for \(ref)")
        }
        guard let device = await linkedDevice(of: peripheral) else {
            throw RelinkError(.notConnected, "\(ref) has no link (the database relinkd read last is in Register's restored state)")
        }
        guard device.servicesResolved else {
            throw RelinkError(.servicesNotResolved, "\(ref) is linked but bluetoothd has not resolved its services yet: ask again after its connected event")
        }
        return await bluez.mirror.gattDatabase(of: device.path, readAt: Date())
    }

    /// The descriptor's BlueZ object on the current link, for a read or a
    /// write. The CCCD (0x2902) is not written: relinkd's subscriptions own it.
    func locateDescriptor(_ ref: PeripheralRef, _ key: DescriptorKey, forWriting: Bool) async throws(RelinkError) -> ObjectPath {
        if forWriting && key.isClientCharacteristicConfiguration {
            throw RelinkError(.notPermitted, "the Client Characteristic Configuration descriptor (0x2902) belongs to relinkd's subscriptions: use Subscribe and Unsubscribe")
        }
        let peripheral = try knownPeripheral(ref)
        guard let device = await linkedDevice(of: peripheral) else { throw RelinkError(.notConnected, "\(ref) has no link") }
        let mirror = await bluez.mirror
        let service = key.characteristic.service.string, characteristic = key.characteristic.characteristic.string
        let services = mirror.services(of: device.path).filter { $0.uuid == service }
        guard !services.isEmpty else {
            throw RelinkError(.unknownCharacteristic, "\(ref): service \(service) is not on the link (services \(device.servicesResolved ? "resolved" : "not resolved yet"))")
        }
        guard let found = services.lazy.flatMap({ mirror.characteristics(of: $0.path) }).first(where: { $0.uuid == characteristic }) else {
            throw RelinkError(.unknownCharacteristic, "\(ref): service \(service) has no characteristic \(characteristic) on the link")
        }
        guard let descriptor = mirror.descriptors(of: found.path).first(where: { $0.uuid == key.descriptor.string }) else {
            throw RelinkError(.unknownDescriptor, "\(ref): characteristic \(characteristic) of service \(service) has no descriptor \(key.descriptor)")
        }
        return descriptor.path
    }
}
