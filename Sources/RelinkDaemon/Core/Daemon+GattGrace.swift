import BlueZ
import DaemonCore
import Logging
import RelinkModel
import Restoration

// A link whose services resolved without a subscribed characteristic,
// carried out: the core decides (DaemonCore+Gatt.swift, ``GattGrace``); this
// sleeps its timer, reads the link's GATT objects, stores the subscriptions
// that failed, reconnects the link and says each step in the journal.
extension Daemon {
    /// The peripheral's device and what its link shows of its GATT
    /// database now; nil when bluetoothd has no device for it.
    func linkGatt(of peripheral: PeripheralID) async -> (Device, DaemonCore<DaemonClock>.LinkGatt)? {
        guard let device = await knownDevice(of: peripheral) else { return nil }
        return (device, await linkGatt(of: device))
    }

    /// What the device's link shows of its GATT database now.
    func linkGatt(of device: Device) async -> DaemonCore<DaemonClock>.LinkGatt {
        let mirror = await bluez.mirror
        var characteristics: [BluetoothUUID: Set<BluetoothUUID>] = [:]
        for service in mirror.services(of: device.path) {
            guard let uuid = try? BluetoothUUID(parsing: service.uuid) else { continue }
            var seen = characteristics[uuid] ?? []
            for characteristic in mirror.characteristics(of: service.path) {
                if let c = try? BluetoothUUID(parsing: characteristic.uuid) { seen.insert(c) }
            }
            characteristics[uuid] = seen
        }
        return .init(connected: device.connected, servicesResolved: device.servicesResolved, characteristics: characteristics)
    }

    /// What the device's link shows of `key` when it has no object for it
    /// (``GattGrace/Absence``); nil when the characteristic is there.
    func absence(of key: CharacteristicKey, on device: Device) async -> GattGrace.Absence? {
        await linkGatt(of: device).absence(of: key)
    }

    /// Removes subscriptions the peripheral cannot serve: each identifier
    /// told by a `subscription-failed` event, the removals and the events
    /// in one commit; then the link is asked what each removal needs.
    func failSubscriptions(_ failed: [DaemonCore<DaemonClock>.FailedSubscription]) async {
        beginBatch()
        for failure in failed {
            let subscription = failure.subscription, reason = failure.reason
            logger.warning("a subscription failed and was removed: \(reason.message)", metadata: .journal([
                .restoreID: "\(subscription.identifier)", .peripheral: "\(subscription.peripheral)", .characteristic: "\(subscription.characteristic)",
                .error: "\(reason.errorName)", .decision: "subscription-failed",
            ]))
            do {
                try await commit([.removeSubscription(subscription)])
                try await emit(.subscriptionFailed(peripheral: subscription.peripheral, characteristic: subscription.characteristic, reason: reason),
                               to: [subscription.identifier])
            } catch {
                logger.error("cannot store a failed subscription", metadata: .journal([
                    .restoreID: "\(subscription.identifier)", .peripheral: "\(subscription.peripheral)",
                    .characteristic: "\(subscription.characteristic)", .error: "\(error)",
                ]))
            }
            await run(failure.stop)
        }
        endBatch()
    }

    /// Carries out one of the GATT grace's effects that is not a plain
    /// journal line: reconnecting the link so that bluetoothd rediscovers services.
    func rediscoverServices(_ peripheral: PeripheralID, attempt: Int, missing: [CharacteristicKey]) async {
        guard let (device, _) = await linkGatt(of: peripheral) else { return }
        logger.notice("a subscribed characteristic is missing on the link; reconnecting to rediscover services", metadata: .journal([
            .peripheral: "\(peripheral)", .attempt: "\(attempt)", .decision: "rediscover-services",
            .characteristic: "\(missing.map(\.description))",
        ]))
        let bluez = self.bluez, logger = self.logger
        loop.spawned.append {
            do { try await bluez.disconnect(device.path) } catch {
                logger.notice("Disconnect failed", metadata: .journal([.error: "\(error)"]))
            }
            return []
        }
    }

    /// The GATT grace's journal lines.
    func journalGatt(_ effect: DaemonCore<DaemonClock>.Effect) {
        switch effect {
        case .characteristicNotYetOnLink(let peripheral, let key):
            logger.notice("characteristic not yet on the link; armed when it appears", metadata: .journal([.peripheral: "\(peripheral)", .characteristic: "\(key)"]))
        case .characteristicLeftLink(let peripheral, let key):
            logger.notice("a subscribed characteristic left the link; armed again when it is back", metadata: .journal([
                .peripheral: "\(peripheral)", .characteristic: "\(key)", .decision: "gatt-changed",
            ]))
        case .rediscoverLater(let peripheral, let after, let missing):
            logger.warning("a subscribed characteristic is still missing on the link after \(GattGrace.retryLimit) reconnections; reconnecting again in \(after)", metadata: .journal([
                .peripheral: "\(peripheral)", .characteristic: "\(missing.map(\.description))", .decision: "rediscover-later",
            ]))
        case .waitForGatt(let peripheral, let missing):
            logger.warning("a subscribed characteristic is missing on the link; waiting for it", metadata: .journal([
                .peripheral: "\(peripheral)", .characteristic: "\(missing.map(\.description))",
            ]))
        default:
            break
        }
    }
}
