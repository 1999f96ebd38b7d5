public import RelinkModel
public import Restoration

// The GATT database of each wanted peripheral: read from bluetoothd's
// objects once they have been still for a while after a change (bluetoothd
// adds them one at a time, and a database read half-way would be reported
// as a change twice), kept, and compared with the one read before: a
// different layout is a `services-changed` event to every identifier with
// an intent or a subscription on the peripheral.
extension DaemonCore {
    /// The peripherals some identifier wants: an intent or a subscription on them.
    public var interestedPeripherals: Set<PeripheralID> {
        Set(machines.keys.map(\.peripheral)).union(planner.subscribedPeripherals)
    }

    /// The databases stored before this relinkd started.
    mutating func gattDatabasesLoaded(_ stored: [PeripheralID: GattDatabase]) -> [Effect] {
        gattDatabases = stored
        gattReads = [:]
        return []
    }

    /// The GATT objects of the peripheral's linked, resolved device moved
    /// (or its services resolved): when an identifier wants it, its
    /// database is read once its objects have been still for the settle
    /// time; a later move starts the time over.
    mutating func gattObjectsMoved(_ peripheral: PeripheralID) -> [Effect] {
        guard !interestedIdentifiers(in: peripheral).isEmpty else { return [] }
        let generation = (gattReads[peripheral] ?? 0) &+ 1
        gattReads[peripheral] = generation
        return [.gattSettleTimer(peripheral, generation: generation)]
    }

    /// A settle time ended: read the database unless the objects moved since.
    mutating func gattSettled(_ peripheral: PeripheralID, generation: UInt64) -> [Effect] {
        guard gattReads[peripheral] == generation else { return [] }  // a later move reads it
        gattReads[peripheral] = nil
        return [.readGattDatabase(peripheral)]
    }

    /// The database as read: kept and stored; an empty one (services
    /// removed, the new ones not there yet) is not kept. A layout that
    /// differs from the one read before is told to every interested
    /// identifier, in the same commit.
    mutating func gattDatabaseRead(_ peripheral: PeripheralID, _ database: GattDatabase) -> [Effect] {
        guard !database.services.isEmpty else { return [] }
        let previous = gattDatabases.updateValue(database, forKey: peripheral)
        guard let previous, !previous.sameLayout(as: database) else { return [.storeGattDatabase(peripheral, database)] }
        return [.servicesChanged(peripheral, database, identifiers: interestedIdentifiers(in: peripheral))]
    }
}
