import BlueZ
import DaemonCore
import Logging
import RelinkAPI
import RelinkModel
import RelinkStore

// `Central1.RegisterForConnectionEvents` and `UnregisterForConnectionEvents`
// (issue 35 item 3; docs/api/Central1.md), and the device links they watch:
// CoreBluetooth's `registerForConnectionEvents(options:)`. Whom to tell is
// the core's (``ConnectionEventWatch``); this reads bluetoothd's devices,
// stores a peripheral for a matching device relinkd did not know, and stores
// the events with the registrations in one commit.
extension Daemon {
    /// Replaces the identifier's registration with one for `services` and
    /// `peripherals` (each one the caller may name); the matching links up
    /// now are told `peer-connected` at once, in the commit that stores it.
    /// - Throws: `InvalidArguments` when both are empty; `UnknownPeripheral`
    ///   for a peripheral relinkd does not know or the caller may not name;
    ///   `StoreFailed`.
    func registerForConnectionEvents(_ id: RestoreIdentifier, services: Set<BluetoothUUID>, peripherals refs: [PeripheralRef],
                                     for caller: APICaller) async throws(RelinkError) -> APIResult {
        guard !services.isEmpty || !refs.isEmpty else {
            throw RelinkError(.invalidArguments, "options must name at least one service or peripheral (UnregisterForConnectionEvents stops the events)")
        }
        var peripherals = Set<PeripheralID>()
        for ref in refs {
            let peripheral = try knownPeripheral(ref)
            guard mayName(peripheral, caller) else { throw Self.unknownPeripheral(ref) }
            peripherals.insert(peripheral)
        }
        let links = await peerLinksNow(alsoWanting: services)
        let (registration, told) = core.connectionEvents.registering(id, services: services, peripherals: peripherals, connectedNow: links)
        submitGathered()
        try await commitNow(try connectionEventsRequest(told))
        await perform(core.handle(.connectionEventsStored(id, registration, connectedNow: links)))
        for peripheral in registration.told { discovered(peripheral, by: id) }
        let named = services.map(\.string).sorted() + peripherals.sorted().map(\.description)
        logger.info("connection events registered for \(named.joined(separator: ", "))", metadata: .journal([
            .restoreID: "\(id)", .decision: "connection-events-registered",
        ]))
        return APIResult()
    }

    /// Ends the identifier's registration (nothing when it has none).
    /// - Throws: `StoreFailed`.
    func unregisterForConnectionEvents(_ id: RestoreIdentifier) async throws(RelinkError) -> APIResult {
        guard core.connectionEvents.registrations[id] != nil else { return APIResult() }
        try await commit([.removeConnectionEvents(id)])
        await perform(core.handle(.connectionEventsStored(id, nil, connectedNow: [])))
        logger.info("connection events unregistered", metadata: .journal([.restoreID: "\(id)", .decision: "connection-events-unregistered"]))
        return APIResult()
    }

    /// Every device bluetoothd shows connected on relinkd's adapter, as
    /// peer links; a device relinkd knows no peripheral for is one (stored)
    /// when it offers a service a registration, or `alsoWanting`, matches.
    func peerLinksNow(alsoWanting: Set<BluetoothUUID> = []) async -> [ConnectionEventWatch.PeerLink] {
        var links: [ConnectionEventWatch.PeerLink] = []
        for device in await bluez.mirror.connectedDevices where device.adapter == adapterPath {
            guard let link = await peerLink(device, alsoWanting: alsoWanting) else { continue }
            links.append(link)
        }
        return links
    }

    /// The device's link as the core's watch sees it; nil for a device
    /// relinkd knows no peripheral for that no registration wants.
    func peerLink(_ device: Device, alsoWanting: Set<BluetoothUUID> = []) async -> ConnectionEventWatch.PeerLink? {
        guard let address = Self.address(of: device) else { return nil }
        let services = device.serviceUUIDs
        let peripheral: PeripheralID
        if let known = peripheralID(for: address) {
            peripheral = known
        } else if core.connectionEvents.wantsUnknown(offering: services) || !alsoWanting.isDisjoint(with: services) {
            peripheral = await knownPeripheral(for: address, services: services)
        } else {
            return nil
        }
        return ConnectionEventWatch.PeerLink(peripheral: peripheral, address: address, services: services, connected: device.connected)
    }

    /// A device's `Connected` or `UUIDs` changed, or it appeared connected:
    /// the core decides who hears of it.
    func peerLinkChanged(_ device: Device, cause: LinkEndCause?) async {
        guard !core.connectionEvents.registrations.isEmpty, device.adapter == adapterPath,
              let link = await peerLink(device) else { return }
        await perform(core.handle(.peerLinkChanged(link, cause: cause)))
    }

    /// Every link up now (start-up, bluetoothd back): the core tells what
    /// ended unseen and what matches and was not told.
    func peersNow(atStart: Bool) async {
        guard !core.connectionEvents.registrations.isEmpty else { return }
        await perform(core.handle(.peersNow(await peerLinksNow(), atStart: atStart)))
    }

    /// The commit that stores what the core's watch decided: the
    /// registrations and each event, in order.
    /// - Throws: `InvalidArguments` when an event cannot be encoded.
    func connectionEventsRequest(_ told: ConnectionEventWatch.Told) throws(RelinkError) -> RestoreBatch.Request {
        var request = RestoreBatch.Request(mutations: told.registrations.keys.sorted().compactMap { id in
            told.registrations[id].map { .putConnectionEvents(id, $0) }
        })
        for (id, event) in told.events {
            let one = try Self.eventRequest(event, to: [id])
            request.mutations += one.mutations
            request.notes += one.notes
        }
        return request
    }

    /// Carries out ``DaemonCore/Effect/connectionEvents(_:)``: gathered into
    /// the next commit; each told peripheral may be named by the identifier.
    func tellConnectionEvents(_ told: ConnectionEventWatch.Told) {
        do { enqueueGathered(try connectionEventsRequest(told)) } catch {
            logger.error("connection events not stored: \(error)")
        }
        for (id, event) in told.events {
            if case .connectionEvent(let peripheral, _, true, _) = event { discovered(peripheral, by: id) }
        }
    }
}
