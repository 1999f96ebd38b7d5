import BlueZ
import DBus
import RelinkAPI
import Foundation
import RelinkStore
import Restoration
import RelinkModel

// The Central1 and Peripheral1 objects: published, kept current, and
// announced only to the attached clients allowed to see them.
extension Daemon {
    /// Connects the client API's objects (before ``run(onReady:)``).
    func attach(_ publisher: APIPublisher) {
        self.publisher = publisher
    }

    /// Start-up hook (Daemon+Startup.swift): an identifier loaded from the store.
    func apiLoaded(_ id: RestoreIdentifier, _ entry: StoredState.Identifier) {
        api.owners[id] = entry.record.ownerUID
        api.outboxes[id] = OutboxCursor(entry.outbox, limit: entry.record.outboxLimit)
        api.sequencers[id] = EventSequencer(nextStored: entry.outbox.nextSequence, cleanStart: store.openedAfterCleanStop)
    }

    /// After start-up: every identifier's and peripheral's object, and
    /// `Ready`. Stopped (SIGTERM) part way, it leaves the rest: 10,000
    /// objects take over 100 ms, and the objects go with the process.
    func publishAll() async {
        for id in core.identifiers.sorted() {
            guard !Task.isCancelled else { return }
            publishCentral(id)
        }
        let devices = await bluez.mirror.devicesByAddress(adapter: adapterPath)
        for (peripheral, row) in known.peripherals.sorted(by: { $0.key < $1.key }) {
            guard !Task.isCancelled else { return }
            publishPeripheral(peripheral, device: devices[row.address.address.string])
        }
        // Viewers of every peripheral in one pass (not one pass per peripheral).
        var viewers: [PeripheralID: Set<UInt32>] = [:]
        for intent in core.machines.keys { if let o = api.owners[intent.identifier] { viewers[intent.peripheral, default: []].insert(o) } }
        for s in core.planner.subscriptions { if let o = api.owners[s.identifier] { viewers[s.peripheral, default: []].insert(o) } }
        for (peripheral, uids) in viewers {
            for uid in uids { api.usedBy[uid, default: []].insert(peripheral) }
            publisher?.setViewers(uids, of: peripheral)
        }
        if let status = core.adapter.current { publisher?.setAdapterStatus(status) }
        publisher?.setReady(true)
    }

    // MARK: Central1

    func centralValues(_ id: RestoreIdentifier) -> [String: DBusValue] {
        let scan = core.scanIntents[id]
        return [
            Central1Property.identifier.rawValue: .string(id.rawValue), Central1Property.owner.rawValue: .uint32(api.owners[id] ?? 0),
            Central1Property.nameRule.rawValue: .string(core.namePreferences[id] == .advertisingName ? "advertising" : "gap"),
            Central1Property.scanning.rawValue: .boolean(scan != nil), Central1Property.scanServices.rawValue: .array(.string, (scan?.services ?? []).map(\.string).sorted().map { .string($0) }),
            Central1Property.allowDuplicates.rawValue: .boolean(scan?.allowDuplicates ?? false),
            Central1Property.scanOptions.rawValue: Self.scanOptions(scan),
        ].merging(outboxValues(id)) { $1 }
    }

    func outboxValues(_ id: RestoreIdentifier) -> [String: DBusValue] {
        let cursor = api.outboxes[id] ?? OutboxCursor(limit: RestoreIdentifierRecord.defaultOutboxLimit)
        return [
            Central1Property.lastSequence.rawValue: .uint64(UInt64(max(0, cursor.lastSequence))), Central1Property.acknowledged.rawValue: .uint64(UInt64(max(0, cursor.acknowledged))),
            Central1Property.droppedEvents.rawValue: .uint64(UInt64(max(0, cursor.droppedTotal))), Central1Property.eventLimit.rawValue: .uint32(UInt32(clamping: cursor.limit)),
        ]
    }

    func publishCentral(_ id: RestoreIdentifier, alsoTo caller: String? = nil) {
        let owner = api.owners[id] ?? 0
        publisher?.exportCentral(id, owner: owner, values: centralValues(id), announceTo: audience(ofOwner: owner, plus: caller))
    }

    /// Attached clients (of any identifier) that may see an identifier of `owner`.
    func audience(ofOwner owner: UInt32, plus extra: String? = nil) -> [String] {
        var names = Set(extra.map { [$0] } ?? [])
        for clients in api.attachments.values {
            for (name, a) in clients where a.uid == 0 || a.uid == owner { names.insert(name) }
        }
        return names.sorted()
    }

    /// The identifier's scan or name rule changed.
    func centralChanged(_ id: RestoreIdentifier) {
        publisher?.updateCentral(id, centralValues(id), to: api.clients(of: id))
    }

    /// The outbox's position changed (a commit, an `Ack`, a drop): the
    /// Central1 object has the new values at once; `PropertiesChanged` goes
    /// out at once for a quiet identifier, then at most once per
    /// ``outboxSignalInterval`` while they keep changing (``SignalThrottle``):
    /// a band streaming values moves `LastSequence` and `Acknowledged` at
    /// every value, and a signal each would double what its client receives.
    func outboxChanged(_ id: RestoreIdentifier) {
        guard let publisher, publisher.storeCentral(id, outboxValues(id)) else { return }
        switch api.outboxSignals.changed(id, at: clock.now) {
        case .signal(let windowEnd):
            signalOutbox(id)
            armOutboxWindow(id, until: windowEnd)
        case .deferred:
            break
        }
    }

    /// The ``DaemonInput/outboxWindowEnded(_:)`` input.
    func outboxWindowEnded(_ id: RestoreIdentifier) {
        guard let next = api.outboxSignals.windowEnded(id, at: clock.now) else { return }
        signalOutbox(id)
        armOutboxWindow(id, until: next)
    }

    private func signalOutbox(_ id: RestoreIdentifier) {
        publisher?.signalCentral(id, Self.outboxProperties, to: api.clients(of: id))
    }

    private func armOutboxWindow(_ id: RestoreIdentifier, until end: ContinuousClock.Instant) {
        input(.outboxWindowEnded(id), at: end)
    }

    /// The Central1 properties that move with the outbox.
    static let outboxProperties = ["LastSequence", "Acknowledged", "DroppedEvents", "EventLimit"]

    /// How often, at most, `PropertiesChanged` for the outbox properties
    /// goes out per identifier while they keep changing.
    static let outboxSignalInterval: Duration = .milliseconds(100)

    // MARK: Peripheral1

    /// Users that may see a peripheral: owners of identifiers with an
    /// intent or a subscription on it, or that discovered it (the first
    /// ones also noted in `usedBy`, with or without a publisher).
    func refreshViewers(of peripheral: PeripheralID) {
        var uids = Set<UInt32>()
        for intent in core.machines.keys where intent.peripheral == peripheral { if let o = api.owners[intent.identifier] { uids.insert(o) } }
        for id in core.planner.identifiers(subscribedOn: peripheral) { if let o = api.owners[id] { uids.insert(o) } }
        for uid in uids { api.usedBy[uid, default: []].insert(peripheral) }
        guard let publisher else { return }
        for (uid, seen) in api.discoveredBy where seen.contains(peripheral) { uids.insert(uid) }
        let (gained, lost) = publisher.setViewers(uids, of: peripheral)
        // Root saw it all along; others learn of it now (or lose it).
        func clients(of users: Set<UInt32>) -> [String] {
            guard !users.isEmpty else { return [] }
            var names = Set<String>()
            for attached in api.attachments.values {
                for (name, a) in attached where a.uid != 0 && users.contains(a.uid) { names.insert(name) }
            }
            return names.sorted()
        }
        publisher.announcePeripheral(peripheral, added: true, to: clients(of: gained))
        publisher.announcePeripheral(peripheral, added: false, to: clients(of: lost))
    }

    /// Attached clients allowed to see a peripheral.
    func peripheralAudience(_ peripheral: PeripheralID) -> [String] {
        guard !api.attachments.isEmpty else { return [] }
        let viewers = publisher?.viewers(of: peripheral) ?? []
        var names = Set<String>()
        for clients in api.attachments.values {
            for (name, a) in clients where a.uid == 0 || viewers.contains(a.uid) { names.insert(name) }
        }
        return names.sorted()
    }

    /// Both names of a peripheral, newest known.
    func names(of peripheral: PeripheralID) -> PeripheralNames {
        if let names = known.peripheralNames[peripheral] { return names }
        let row = known.peripherals[peripheral]
        return PeripheralNames(advertising: row?.advertisingName, gap: row?.gapName)
    }

    func peripheralValues(_ peripheral: PeripheralID, device: Device?) -> [String: DBusValue] {
        guard let row = known.peripherals[peripheral] else { return [:] }
        let names = names(of: peripheral)
        let resolved = names.resolved(preferring: .gapName)
        func ms(_ date: Date?) -> DBusValue { .uint64(UInt64(max(0, Int64(((date?.timeIntervalSince1970 ?? 0) * 1000).rounded())))) }
        var values: [String: DBusValue] = [
            Peripheral1Property.id.rawValue: .string(peripheral.description), Peripheral1Property.address.rawValue: .string(row.address.address.string),
            Peripheral1Property.addressType.rawValue: .string(row.address.addressType.rawValue), Peripheral1Property.adapter.rawValue: .string(row.address.adapter),
            Peripheral1Property.advertisingName.rawValue: .string(names.advertising?.value ?? ""), Peripheral1Property.advertisingNameSeen.rawValue: ms(names.advertising?.seenAt),
            Peripheral1Property.gapName.rawValue: .string(names.gap?.value ?? ""), Peripheral1Property.gapNameSeen.rawValue: ms(names.gap?.seenAt),
            Peripheral1Property.name.rawValue: .string(resolved?.name ?? ""), Peripheral1Property.nameSource.rawValue: .string(resolved?.source.rawValue ?? "none"),
            Peripheral1Property.services.rawValue: .array(.string, Set(row.serviceUUIDs.map(\.string) + (device?.uuids ?? []).map { $0.lowercased() }).sorted().map { .string($0) }),
            Peripheral1Property.lastSeen.rawValue: ms(row.lastSeenAt),
            Peripheral1Property.connected.rawValue: .boolean(device?.connected ?? false), Peripheral1Property.rssi.rawValue: .int16(device?.rssi ?? 0),
        ]
        if let last = api.lastSeen[peripheral] { values["LastSeen"] = ms(last) }
        let limits = writeStreams.limits[peripheral]
        values[Peripheral1Property.mtu.rawValue] = .uint16(UInt16(limits?.mtu ?? 0))
        values[Peripheral1Property.maximumWriteWithResponse.rawValue] = .uint16(UInt16(limits?.withResponse ?? 0))
        values[Peripheral1Property.maximumWriteWithoutResponse.rawValue] = .uint16(UInt16(limits?.withoutResponse ?? 0))
        values[Peripheral1Property.paired.rawValue] = .boolean(device?.paired ?? false)
        values[Peripheral1Property.bonded.rawValue] = .boolean(device?.bonded ?? false)
        values[Peripheral1Property.trusted.rawValue] = .boolean(device?.trusted ?? false)
        return values
    }

    func publishPeripheral(_ peripheral: PeripheralID, device: Device?) {
        guard let publisher, known.peripherals[peripheral] != nil else { return }
        publisher.exportPeripheral(peripheral, values: peripheralValues(peripheral, device: device), announceTo: peripheralAudience(peripheral))
    }

    /// Something of a peripheral changed (row, names; with `device`, its link and RSSI).
    func peripheralChanged(_ peripheral: PeripheralID, device: Device? = nil) {
        guard let publisher else { return }
        guard publisher.hasPeripheral(peripheral) else { return publishPeripheral(peripheral, device: device) }
        var values = peripheralValues(peripheral, device: device)
        if device == nil {
            for key in [Peripheral1Property.connected, .rssi, .paired, .bonded, .trusted] { values[key.rawValue] = nil }
        }
        publisher.updatePeripheral(peripheral, values, to: peripheralAudience(peripheral))
    }

    /// bluetoothd removed the peripheral's device object (`RemoveDevice`,
    /// `bluetoothctl remove`, a restart): what Peripheral1 reads from it
    /// (`Connected`, `RSSI`, `Paired`, `Bonded`, `Trusted`) is false or 0
    /// until it is back, as documented.
    func deviceObjectGone(_ peripheral: PeripheralID) {
        guard let publisher, publisher.hasPeripheral(peripheral) else { return }
        publisher.updatePeripheral(peripheral, peripheralValues(peripheral, device: nil), to: peripheralAudience(peripheral))
    }

    /// The link or the advertisement of a peripheral changed (from the mirror).
    func peripheralSeen(_ peripheral: PeripheralID, device: Device) {
        api.lastSeen[peripheral] = Date()
        peripheralChanged(peripheral, device: device)
    }

    /// A scan of `id` discovered `peripheral`: its owner may now see it.
    func discovered(_ peripheral: PeripheralID, by id: RestoreIdentifier) {
        guard let owner = api.owners[id], api.discoveredBy[owner, default: []].insert(peripheral).inserted else { return }
        refreshViewers(of: peripheral)
    }

    // MARK: Restored state

    /// `Register`'s `restored` dictionary.
    func restoredState(_ id: RestoreIdentifier, new: Bool, cursor: OutboxCursor, launchReason: LaunchReason? = nil) async -> DBusValue {
        let intents = core.machines.filter { $0.key.identifier == id }
        let subscriptions = core.planner.subscriptions.filter { $0.identifier == id }
        let wanted = Set(intents.keys.map(\.peripheral)).union(subscriptions.map(\.peripheral)).sorted()
        let preference = core.namePreferences[id] ?? .gapName
        var entries: [DBusValue] = []
        for peripheral in wanted {
            let row = known.peripherals[peripheral]
            let state = intents[ConnectionIntentID(identifier: id, peripheral: peripheral)].map { Self.stateName($0.state) } ?? "none"
            let keys = subscriptions.filter { $0.peripheral == peripheral }.map(\.characteristic).sorted()
            let pairs = { (keys: [CharacteristicKey]) in
                DBusValue.array(.structure([.string, .string]), keys.map { .structure([.string($0.service.string), .string($0.characteristic.string)]) })
            }
            var entry: [String: DBusValue] = [
                "object": .objectPath(APIPath.peripheral(peripheral)), "id": .string(peripheral.description),
                "address": .string(row?.address.address.string ?? ""), "state": .string(state),
                "services": .array(.string, (row?.serviceUUIDs ?? []).map { .string($0.string) }),
                "subscriptions": pairs(keys),
                "notifying": pairs(keys.filter { core.planner.isNotifying(peripheral, $0) }),
                "name": .string(names(of: peripheral).resolved(preferring: preference)?.name ?? ""),
            ]
            // The database relinkd read last (CoreBluetooth's restored
            // peripherals carry their discovered services), with when.
            if let database = core.gattDatabases[peripheral] { entry["gatt_database"] = .string(database.json) }
            entries.append(Self.dict(entry))
        }
        let scan = core.scanIntents[id]
        let adapter = core.adapter.current ?? AdapterStatus(.bluetoothdMissing)
        var launch: [String: DBusValue] = [:]
        if let launchReason { launch["launch_reason"] = LaunchOptions.reasonValue(launchReason) }
        return Self.dict(launch.merging([
            "new": .boolean(new),
            "adapter_state": .string(adapter.state.rawValue),
            "adapter_roles": .array(.string, adapter.roles.map { .string($0.rawValue) }),
            "peripherals": .array(.dictionary(key: .string, value: .variant), entries),
            "peripheral_manager": restoredPeripheralRole(id),
            "scan_services": .array(.string, (scan?.services ?? []).map(\.string).sorted().map { .string($0) }),
            "scan_options": Self.scanOptions(scan),
            "scanning": .boolean(scan != nil),
            "connection_events": Self.connectionEventOptions(core.connectionEvents.registrations[id]),
            "last_sequence": .uint64(UInt64(max(0, cursor.lastSequence))),
            "acknowledged": .uint64(UInt64(max(0, cursor.acknowledged))),
            "dropped_events": .uint64(UInt64(max(0, cursor.droppedTotal))),
            "dropped_range": .structure([.uint64(UInt64(max(0, cursor.droppedRange?.lowerBound ?? 0))),
                                         .uint64(UInt64(max(0, cursor.droppedRange?.upperBound ?? 0)))]),
        ]) { $1 })
    }

    /// A scan's options as `Scan` takes them: `allow_duplicates` and its
    /// data prefixes (`manufacturer_data`, `service_data`, when it has some).
    static func scanOptions(_ scan: ScanIntent?) -> DBusValue {
        dict(["allow_duplicates": .boolean(scan?.allowDuplicates ?? false)]
            .merging(DataPrefixOptions.options(scan?.dataPrefixes ?? [], keys: DataPrefixOptions.scanKeys)) { $1 })
    }

    /// A connection-event registration as `RegisterForConnectionEvents`
    /// takes it (`services`, `peripherals`), with the peripherals it was
    /// told connected (`connected`); empty when there is none.
    static func connectionEventOptions(_ registration: ConnectionEventRegistration?) -> DBusValue {
        guard let registration else { return dict([:]) }
        return dict([
            "services": .array(.string, registration.services.map(\.string).sorted().map { .string($0) }),
            "peripherals": .array(.string, registration.peripherals.sorted().map { .string($0.description) }),
            "connected": .array(.string, registration.told.sorted().map { .string($0.description) }),
        ])
    }

    /// An `a{sv}`, keys sorted.
    static func dict(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(key: .string, value: .variant, values.sorted { $0.key < $1.key }.map { .init(.string($0.key), .variant($0.value)) })
    }
}
