import Systemd
import BlueZ
import DBus
import Foundation
import Logging
import RelinkStore
import DaemonCore
import Restoration
import RelinkModel

// What bluetoothd did, turned into machine inputs, scan deliveries and
// notified values.
extension Daemon {
    func handleBlueZ(_ event: BlueZEvent) async {
        switch event {
        case .reset(.initial):
            break
        case .reset(let reason):
            // Read before the machines are fed: the BlueZ layer reports
            // `.reset` once it has read the new bluetoothd's objects.
            let adapterOn = await bluez.mirror.adapter(adapterPath)?.isOn == true
            let why: DaemonCore<DaemonClock>.BluetoothdReturn = switch reason {
            case .accessGranted: .accessGranted
            case .bluetoothdAnswered: .answered
            default: .restarted
            }
            await perform(core.handle(.bluetoothdBack(why, adapterOn: adapterOn)))
            await peersNow(atStart: false)
        case .serviceLost:
            // Every link and notify session ends with bluetoothd. Tell the
            // machines now: the BlueZ layer reports `.reset` only when it
            // could read the new bluetoothd's objects.
            await perform(core.handle(.bluetoothdLost))
        case .adapterPowered(let path, let on):
            guard path == adapterPath else { return }
            await perform(core.handle(.adapterPowered(on)))
        case .adapterStatus(let path, let status):
            adapterStatusReported(path, status)
        case .mirror(let change):
            await handleMirror(change)
        }
    }

    /// Whether ``handleBlueZ(_:)`` does anything with an event: the BlueZ
    /// layer's sink drops the others before they reach the loop. Keep it in
    /// step with the cases of `handleMirror(_:)`.
    nonisolated static func handles(_ event: BlueZEvent) -> Bool {
        guard case .mirror(let change) = event else { return true }
        switch change {
        case .deviceAdded, .deviceRemoved, .gattCharacteristicAdded, .gattObjectRemoved, .nameChanged, .valueUpdated,
             .gattServiceAdded, .gattDescriptorAdded, .advertisementReported, .linkEnded, .adapterManagerAdded:
            return true
        case .propertyChanged(_, let interface, _, _, _):
            return interface == BlueZInterface.device
        default:
            return false
        }
    }

    private func handleMirror(_ change: MirrorEvent) async {
        switch change {
        case .adapterManagerAdded(let path, let interface):
            guard path == adapterPath else { return }
            await managerAppeared(interface)
        case .deviceAdded(let device):
            await deviceAppeared(device)
            await advertised(device)
            if device.connected { await peerLinkChanged(device, cause: nil) }
        case .propertyChanged(let path, BlueZInterface.device, "UUIDs", _, _):
            // Its services became known: a connection-event registration may match it now.
            if let device = await bluez.mirror.device(path), device.connected { await peerLinkChanged(device, cause: nil) }
        case .propertyChanged(let path, BlueZInterface.device, let name, let old, let new):
            guard let property = Self.deviceProperty(name) else { return }
            guard let device = await bluez.mirror.device(path) else {
                if property == .paired || property == .bonded, case .boolean(true)? = new { await bondSignalled(onRemoved: path) }
                return
            }
            guard device.adapter == adapterPath, let address = Self.address(of: device) else { return }
            let newValue: Bool? = if case .boolean(let value)? = new { value } else { nil }
            let change = DaemonCore<DaemonClock>.DeviceChange(peripheral: peripheralID(for: address), address: address, property: property,
                                                              newValue: newValue, connected: device.connected,
                                                              bonded: device.paired || device.bonded,
                                                              linkEndCause: known.linkEndCauses[path])
            await perform(core.handle(.deviceChanged(change)), device: device, old: old)
            if property == .connected { await peerLinkChanged(device, cause: change.linkEndCause) }
        case .gattServiceAdded(let service):
            await gattObjectsMoved(containing: service.path)
        case .gattDescriptorAdded(let descriptor):
            await gattObjectsMoved(containing: descriptor.path)
        case .gattCharacteristicAdded(let characteristic):
            await gattObjectsMoved(containing: characteristic.path)
            logger.debug("GATT characteristic added", metadata: ["path": "\(characteristic.path)", "awaiting": "\(core.gattGrace.waitingCount)"])
            await writeLimitsAppeared(containing: characteristic.path)
            guard core.gattGrace.isWaiting, let devicePath = await bluez.mirror.devicePath(containing: characteristic.path),
                  let device = await bluez.mirror.device(devicePath), device.connected,
                  let address = Self.address(of: device), let peripheral = peripheralID(for: address) else { return }
            await perform(core.handle(.characteristicsAppeared(peripheral)))
        case .deviceRemoved(let path, let text):
            // bluetoothd removed the Device1 (also one relinkd holds as
            // connected: seen on real bluetoothd after a controller reset).
            guard path.parent == adapterPath, let text, let peripheral = known.peripheralByAddress[text.uppercased()],
                  let address = known.peripherals[peripheral]?.address.address else { return }
            known.linkEndCauses[path] = nil
            await perform(core.handle(.deviceObjectRemoved(peripheral, address)))
            let gone = ConnectionEventWatch.PeerLink(peripheral: peripheral, address: address, services: [], connected: false)
            await perform(core.handle(.peerLinkChanged(gone, cause: nil)))
        case .gattObjectRemoved(let path):
            known.valueRoutes[path] = nil
            await gattObjectsMoved(containing: path)
            // The peripheral's GATT database changed on a live link (its
            // application restarted): bluetoothd re-adds the services under
            // new paths. The session on the old object is gone; the
            // characteristic is armed again when it appears.
            guard let (peripheral, key) = writes.batch.held.ended(onObject: path) else { return }
            queue(core.handle(.characteristicLeft(peripheral, key)))
        case .nameChanged(let device, let change):
            await nameSeen(device: device, gap: change.source == .gap, name: change.current)
        case .valueUpdated(let update):
            notified(update)
        case .linkEnded(let path, let cause):
            known.linkEndCauses[path] = cause  // for the Connected=false that follows
        case .advertisementReported(let path):
            // One report, however many of its properties one signal changed.
            guard let device = await bluez.mirror.device(path), !device.connected else { return }
            await advertised(device)
        default:
            break
        }
    }

    /// The core's name of a `Device1` property relinkd acts on; nil for the others.
    nonisolated static func deviceProperty(_ name: String) -> DaemonCore<DaemonClock>.DeviceProperty? {
        switch name {
        case "Address": .address
        case "Connected": .connected
        case "ServicesResolved": .servicesResolved
        case "RSSI": .rssi
        case "Paired": .paired
        case "Bonded": .bonded
        case "Trusted": .trusted
        default: nil
        }
    }

    /// Carries out a device change's effects, in order: those that need the
    /// device here, the others as any effect.
    private func perform(_ effects: [DaemonCore<DaemonClock>.Effect], device: Device, old: DBusValue?) async {
        for effect in effects {
            switch effect {
            case .followAddressChange: await deviceAddressChanged(device, old: old)
            case .peripheralSeen(let peripheral): peripheralSeen(peripheral, device: device)
            case .peripheralChanged(let peripheral): peripheralChanged(peripheral, device: device)
            case .pairedByBluetoothd(let peripheral): pairedByBluetoothd(peripheral, device: device)
            case .writeStreamsLinkChanged(let peripheral): await writeLinkChanged(peripheral, device: device)
            case .transfersLinkChanged(let peripheral): await transfersLinkChanged(peripheral)
            case .linkEndCauseUsed: known.linkEndCauses[device.path] = nil
            case .checkHalfOpenLater(let address):
                input(.halfOpenCheck(device.path, address), after: Self.halfOpenGrace)
            case .gattObjectsMoved: await gattObjectsMoved(device: device.path)
            default: await perform([effect])
            }
        }
    }

    /// How long a link may stay `Connected` with its services no longer
    /// resolved before relinkd takes it for lost.
    static let halfOpenGrace: Duration = .seconds(1)

    /// The grace of a link whose services went unresolved while it stayed
    /// `Connected` is over: the core decides from the device as it is now
    /// (DaemonCore+Links.swift, `halfOpenLooked`).
    func halfOpenCheck(_ path: ObjectPath, _ address: BluetoothAddress) async {
        let device = await bluez.mirror.device(path)
        let still = device.map { $0.connected && !$0.servicesResolved } ?? false
        await perform(core.handle(.halfOpenLooked(peripheralID(for: address), address, stillHalfOpen: still)), device: path)
    }

    /// Carries out a half-open check's effects: the device's disconnection
    /// needs its path, the others are as any effect.
    private func perform(_ effects: [DaemonCore<DaemonClock>.Effect], device path: ObjectPath) async {
        for effect in effects {
            switch effect {
            case .halfOpenLinkLost(let address):
                logger.notice("a link stayed up with its services unresolved; taken for lost and disconnected", metadata: .journal([
                    .address: "\(address.string)", .decision: "half-open-link",
                ]))
            case .disconnectHalfOpen(let address):
                let bluez = self.bluez, logger = self.logger
                loop.spawned.append {
                    do { try await bluez.disconnect(path) } catch {
                        logger.notice("Disconnect failed", metadata: .journal([.address: "\(address.string)", .error: "\(error)"]))
                    }
                    return []
                }
            default: await perform([effect])
            }
        }
    }

    /// An advertisement (a device appeared or re-advertised): to each scan
    /// client that wants it, coalesced by the scan coordinator.
    private func advertised(_ device: Device) async {
        guard device.adapter == adapterPath, let address = Self.address(of: device) else { return }
        let advertisement = Advertisement(
            address: address, localName: device.names.advertisingName ?? device.name,
            serviceUUIDs: device.serviceUUIDs, data: device.advertisingData, rssi: device.rssi)
        await perform(core.handle(.advertised(advertisement)))
    }

    /// A scan of `id` met `advertisement`: the peripheral at its address
    /// (stored when new), seen by the identifier, and a `discovered` event.
    func discovered(_ advertisement: Advertisement, by id: RestoreIdentifier) async {
        let peripheral = await knownPeripheral(for: advertisement.address)
        discovered(peripheral, by: id)
        do { try emitGathered(.discovered(peripheral: peripheral, advertisement: advertisement), to: [id]) } catch {
            logger.error("cannot store a discovery", metadata: .journal([.restoreID: "\(id)", .error: "\(error)"]))
        }
    }

    /// The peripheral at an address, created (and stored) when new.
    func knownPeripheral(for address: BluetoothAddress, services: Set<BluetoothUUID> = []) async -> PeripheralID {
        if let existing = peripheralID(for: address) { return existing }
        let id = PeripheralID()
        do {
            let row = try PeripheralRecord(
                id: id, address: StoreMapping.deviceAddress(address, adapter: adapterName),
                serviceUUIDs: services.sorted(), createdAt: Date())
            try await commit([.putPeripheral(row)])
            known.peripherals[id] = row
            known.peripheralByAddress[address.string] = id
            peripheralChanged(id)
        } catch {
            logger.error("cannot store a peripheral", metadata: .journal([.address: "\(address.string)", .error: "\(error)"]))
        }
        return id
    }

    /// A characteristic's value changed: a notification on an armed
    /// characteristic goes to each subscribed identifier's outbox once.
    /// The hot path: everything needed comes with the update (no call to
    /// the mirror's actor).
    func notified(_ update: ValueUpdate) {
        guard update.adapter == adapterPath, let (address, key) = valueRoute(update),
              let peripheral = peripheralID(for: address)
        else { return }
        let characteristic = update.characteristic, value = update.value
        let ids = core.planner.route(peripheral, characteristic: key)
        guard core.planner.armedCharacteristics(of: peripheral).contains(key) else {
            // On a session bluetoothd re-armed at the reconnection, before
            // relinkd saw the link up: kept for after its `connected` event.
            guard !ids.isEmpty, update.connected, writes.batch.held.holds(peripheral, key, on: characteristic) else { return }
            do {
                let request = try Self.eventRequest(.valueNotified(peripheral: peripheral, characteristic: key, value: value), to: ids)
                if !writes.batch.held.keep(request, for: peripheral) {
                    logger.warning("too many values before the link was reported up; the oldest was dropped", metadata: .journal([.peripheral: "\(peripheral)"]))
                }
            } catch {
                logger.error("cannot store a notified value", metadata: .journal([.peripheral: "\(peripheral)", .error: "\(error)"]))
            }
            return
        }
        linkCarried(peripheral)
        do {
            try emitGathered(.valueNotified(peripheral: peripheral, characteristic: key, value: value), to: ids)
        } catch {
            logger.error("cannot store a notified value", metadata: .journal([.peripheral: "\(peripheral)", .error: "\(error)"]))
        }
    }
}

/// The parsed address and characteristic key of one characteristic object,
/// kept with the texts they were parsed from (see ``Daemon/valueRoute(_:)``).
struct ValueRoute {
    var address: String
    var addressType: String?
    var service: String
    var characteristic: String
    var parsedAddress: BluetoothAddress
    var key: CharacteristicKey
}

extension Daemon {
    /// The device address and characteristic key a value is for: parsed
    /// once per characteristic object and reused while the mirror reports
    /// the same texts (a value no longer parses three strings).
    func valueRoute(_ update: ValueUpdate) -> (BluetoothAddress, CharacteristicKey)? {
        guard let text = update.address, let service = update.serviceUUID else { return nil }
        if let r = known.valueRoutes[update.characteristic], r.address == text, r.addressType == update.addressType,
           r.service == service, r.characteristic == update.characteristicUUID {
            return (r.parsedAddress, r.key)
        }
        guard let address = Self.address(text, type: update.addressType),
              let serviceUUID = try? BluetoothUUID(parsing: service),
              let characteristicUUID = try? BluetoothUUID(parsing: update.characteristicUUID) else { return nil }
        let key = CharacteristicKey(service: serviceUUID, characteristic: characteristicUUID)
        if known.valueRoutes.count >= Self.valueRouteLimit { known.valueRoutes.removeAll(keepingCapacity: true) }
        known.valueRoutes[update.characteristic] = ValueRoute(
            address: text, addressType: update.addressType, service: service, characteristic: update.characteristicUUID,
            parsedAddress: address, key: key)
        return (address, key)
    }

    /// At most this many routes are kept; then they are parsed afresh.
    static let valueRouteLimit = 4096
}
