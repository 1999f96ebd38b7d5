import BlueZ
import DBus
import Foundation
import Logging
import RelinkStore
import Restoration
import RelinkModel
import RelinkAPI

// The operations behind both Control1 and the client API: each validates
// against the daemon's state, commits to the store, and only then changes
// the daemon and acts.
extension Daemon {
    func requireRegistered(_ id: RestoreIdentifier) throws(RelinkError) {
        guard core.identifiers.contains(id) else { throw .unknownIdentifier(named: id.rawValue) }
    }

    /// Creates an identifier owned by `owner`, durably, and publishes its object.
    /// - Throws: ``RelinkError`` (`invalidArguments`, `storeFailed`).
    func createIdentifier(_ id: RestoreIdentifier, owner: UInt32, namePreference: NamePreference?, eventLimit: Int? = nil,
                          caller: String? = nil) async throws(RelinkError) {
        let preference = namePreference ?? .gapName
        let record: RestoreIdentifierRecord
        do {
            record = try RestoreIdentifierRecord(id: id, ownerUID: owner,
                                                 namePreference: preference == .advertisingName ? .advertising : .gap,
                                                 outboxLimit: eventLimit ?? RestoreIdentifierRecord.defaultOutboxLimit, createdAt: Date())
        } catch { throw RelinkError(.invalidArguments, "\(error)") }
        try await commit([.putIdentifier(record)])
        core.identifiers.insert(id)
        core.namePreferences[id] = preference
        api.owners[id] = owner
        api.outboxes[id] = OutboxCursor(limit: record.outboxLimit)
        api.sequencers[id] = EventSequencer(nextStored: 1, cleanStart: true)
        publishCentral(id, alsoTo: caller)
        logger.info("identifier registered", metadata: .journal([
            .restoreID: "\(id)", .ownerUID: "\(owner)", .eventLimit: "\(record.outboxLimit)",
        ]))
    }

    /// Creates a connection intent (durable before anything acts on it).
    /// - Throws: ``RelinkError`` (`alreadyExists`, `storeFailed`, `failed`).
    func addConnection(_ id: RestoreIdentifier, address: BluetoothAddress, options: ConnectionOptions) async throws(RelinkError) -> PeripheralID {
        let peripheral = await knownPeripheral(for: address, services: options.services)
        guard known.peripherals[peripheral] != nil else { throw RelinkError(.storeFailed, "cannot store the peripheral") }
        let intent = ConnectionIntentID(identifier: id, peripheral: peripheral)
        if let existing = core.machines[intent], !existing.state.isTerminal {
            throw RelinkError(.alreadyExists, "\(id) already has a connection intent for \(address.string)")
        }
        try await rememberServices(options.services, of: peripheral)
        // A peripheral bluetoothd has bonded already: the new intent is bonded.
        known.intentBonds[intent] = core.isBonded(peripheral) ? IntentBond(bonded: true) : nil
        // A failed commit leaves no machine behind and is the reply.
        try await persist(ConnectionIntentRecord(intent: intent, options: options, address: address, phase: .pending))
        var machine = Machine(intent: intent, options: options, knownAddress: address, clock: clock)
        let actions: [Machine.Action]
        switch core.registry.claim(intent) {
        case .owner: actions = machine.start()
        case .sharing(let owner):
            // Already up: the sharer hears `connected` now, not at the next drop.
            actions = machine.claimedByOtherIntent(owner: owner, ownerLink: core.machines[owner]?.reportedLink)
        }
        core.machines[intent] = machine
        await perform(actions, for: intent)
        refreshViewers(of: peripheral)
        return peripheral
    }

    /// Ends `id`'s connection intent for `peripheral` (nothing when none).
    /// The row goes first: a refused commit changes nothing.
    /// - Throws: ``RelinkError`` (`storeFailed`).
    func cancelConnection(_ id: RestoreIdentifier, peripheral: PeripheralID) async throws(RelinkError) {
        guard core.machines[ConnectionIntentID(identifier: id, peripheral: peripheral)] != nil else { return }
        try await commit([.removeConnectionIntent(id, peripheral: peripheral)])
        await connectionCancelled(id, peripheral: peripheral)
    }

    /// The in-memory part of ending a connection intent whose row is
    /// removed: the machine cancelled (its link dropped unless shared), the
    /// link's ownership passed on.
    func connectionCancelled(_ id: RestoreIdentifier, peripheral: PeripheralID) async {
        let intent = ConnectionIntentID(identifier: id, peripheral: peripheral)
        guard var machine = core.machines[intent] else { return }
        // The row is gone already: the cancel's own record (a removal) is not written again.
        let actions = machine.cancel(linkSharedWithOthers: core.registry.isShared(beyond: intent)).filter {
            if case .persist(let record) = $0, case .cancelled = record.phase { false } else { true }
        }
        core.machines[intent] = nil
        health.intentFailures[intent] = nil
        known.intentBonds[intent] = nil
        await perform(actions, for: intent)
        if let newOwner = core.registry.release(intent) { loop.immediate.append((newOwner, .ownershipGranted)) }
        refreshViewers(of: peripheral)
    }

    /// Adds a durable subscription (nothing when it exists). Refused when
    /// the peripheral's link is up and its GATT database is known without
    /// the characteristic (``GattGrace/Absence/notInDatabase``): a typo
    /// in a UUID is said at once, not found by reconnecting the link.
    /// - Throws: ``RelinkError`` (`unknownCharacteristic`, `storeFailed`, `invalidArguments`).
    func addSubscription(_ subscription: Subscription) async throws(RelinkError) {
        if core.planner.contains(subscription) { return }
        let key = subscription.characteristic
        if let device = await linkedDevice(of: subscription.peripheral), await absence(of: key, on: device) == .notInDatabase {
            throw RelinkError(.unknownCharacteristic, GattGrace.unknownCharacteristic(key, .notInDatabase).message)
        }
        try await commit([.addSubscription(subscription)])
        await perform(core.handle(.subscribed(subscription)))
        await applyAutoConnect(renew: false)  // its service may be what auto-connect goes by
        refreshViewers(of: subscription.peripheral)
    }

    /// Removes a subscription (nothing when it does not exist).
    /// - Throws: ``RelinkError`` (`storeFailed`, `invalidArguments`).
    func removeSubscription(_ subscription: Subscription) async throws(RelinkError) {
        guard core.planner.contains(subscription) else { return }
        try await commit([.removeSubscription(subscription)])
        await unsubscribed(subscription)
    }

    /// The in-memory part of removing a subscription whose row is removed.
    func unsubscribed(_ subscription: Subscription) async {
        await perform(core.handle(.unsubscribed(subscription)))
        await applyAutoConnect(renew: false)
        refreshViewers(of: subscription.peripheral)
    }

    /// Replaces the identifier's scan.
    /// - Throws: ``RelinkError`` (`storeFailed`).
    func setScan(_ id: RestoreIdentifier, _ scan: ScanIntent) async throws(RelinkError) {
        try await commit([.putScanIntent(id, scan)])
        core.scanIntents[id] = scan
        await apply(core.scans.register(scan, for: .identifier(id)))
        centralChanged(id)
    }

    /// Ends the identifier's scan.
    /// - Throws: ``RelinkError`` (`storeFailed`).
    func stopScan(_ id: RestoreIdentifier) async throws(RelinkError) {
        try await commit([.removeScanIntent(id)])
        core.scanIntents[id] = nil
        await apply(core.scans.unregister(.identifier(id)))
        centralChanged(id)
    }

    /// Stored events above `after`, oldest first, at most `limit`.
    /// - Throws: ``RelinkError`` (`unknownIdentifier`, `failed`).
    func storedEvents(_ id: RestoreIdentifier, after: Int64, limit: Int) async throws(RelinkError) -> [OutboxEvent] {
        do { return try await store.events(for: id, after: after, limit: limit) } catch { throw Self.controlError(error) }
    }

    /// Deletes events up to `through`.
    /// - Throws: ``RelinkError`` (`invalidArguments` beyond the last event, `storeFailed`).
    func acknowledge(_ id: RestoreIdentifier, through: Int64) async throws(RelinkError) {
        try checkAcknowledgement(id, through: through)
        try await commit([.acknowledgeEvents(id, through: through)])
    }

    /// `a(tss)` of events.
    static func eventArray(_ events: [OutboxEvent]) -> DBusValue {
        .array(.structure([.uint64, .string, .string]), events.map { event in
            .structure([.uint64(UInt64(max(0, event.sequence))), .string(event.kind), .string(String(decoding: event.payload, as: UTF8.self))])
        })
    }

    /// The known peripheral's BlueZ device on relinkd's adapter, linked or
    /// not; nil when bluetoothd has none at its address.
    func knownDevice(of peripheral: PeripheralID) async -> Device? {
        guard let row = known.peripherals[peripheral] else { return nil }
        return await bluez.mirror.device(address: row.address.address.string, adapter: adapterPath)
    }

    /// The peripheral's BlueZ device when its link is up.
    func linkedDevice(of peripheral: PeripheralID) async -> Device? {
        guard let device = await knownDevice(of: peripheral), device.connected else { return nil }
        return device
    }

    /// Keeps the wanted services on the peripheral's row (they feed
    /// auto-connect and the scan strategy after a restart).
    private func rememberServices(_ services: Set<BluetoothUUID>, of peripheral: PeripheralID) async throws(RelinkError) {
        guard var row = known.peripherals[peripheral] else { return }
        let wanted = Set(row.serviceUUIDs).union(services).sorted()
        guard wanted != row.serviceUUIDs.sorted() else { return }
        row.serviceUUIDs = wanted
        try await commit([.putPeripheral(row)])
        known.peripherals[peripheral] = row
        peripheralChanged(peripheral)
    }
}
