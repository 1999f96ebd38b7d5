import Systemd
import BlueZ
import DBus
import Foundation
import Logging
import RelinkStore
import Restoration
import RelinkModel

// A link whose services resolved without a subscribed characteristic.
extension Daemon {
    /// Waits for the characteristic: armed when its GATT object appears;
    /// after ``GattGrace/period`` the core's ``GattGrace`` decides whether
    /// the link is reconnected so bluetoothd discovers services afresh
    /// (seen when a peripheral's GATT server was not up yet, e.g. right
    /// after a bluetoothd restart).
    func awaitGatt(_ peripheral: PeripheralID) {
        guard let generation = core.gattGrace.wait(for: peripheral) else { return }
        let clock = self.clock
        loop.spawned.append {
            do { try await clock.sleep(for: GattGrace.period) } catch { return [] }
            return [.gattCheck(peripheral, generation: generation)]
        }
    }

    func gattCheck(_ peripheral: PeripheralID, generation: UInt64) async {
        guard core.gattGrace.timerEnded(for: peripheral, generation: generation) == .lookAgain else { return }
        await run(core.planner.linkUp(peripheral))  // maybe it is there now
        guard core.gattGrace.isWaiting(for: peripheral) else { return }
        var device: Device?
        if let row = known.peripherals[peripheral] { device = await bluez.mirror.device(address: row.address.address.string, adapter: adapterPath) }
        var missing: [CharacteristicKey: GattGrace.Absence] = [:]
        if let device {
            for key in core.planner.unarmed(of: peripheral) { missing[key] = await absence(of: key, on: device) }
        }
        let outcome = core.gattGrace.stillMissing(peripheral, missing, linkUp: device?.connected == true)
        for key in outcome.failed {
            await subscriptionFailed(peripheral, key, missing[key] ?? .databaseNotKnown)
        }
        guard let decision = outcome.decision else {
            core.gattGrace.stopWaiting(for: peripheral)  // nothing left to wait for; the link stays as it is
            return
        }
        if case .rediscoverLater(let looksLeft, let first) = decision {
            // Said once per wait: the look comes back every period.
            if first {
                logger.warning("a subscribed characteristic is still missing on the link after \(GattGrace.retryLimit) reconnections; reconnecting again in \(GattGrace.period * looksLeft)", metadata: .journal([
                    .peripheral: "\(peripheral)", .characteristic: "\(missing.keys.sorted().map(\.description))", .decision: "rediscover-later",
                ]))
            }
            return
        }
        guard let device, case .rediscover(let attempt) = decision else {
            logger.warning("a subscribed characteristic is missing on the link; waiting for it", metadata: .journal([
                .peripheral: "\(peripheral)", .characteristic: "\(missing.keys.sorted().map(\.description))",
            ]))
            return
        }
        logger.notice("a subscribed characteristic is missing on the link; reconnecting to rediscover services", metadata: .journal([
            .peripheral: "\(peripheral)", .attempt: "\(attempt)", .decision: "rediscover-services",
            .characteristic: "\(missing.keys.sorted().map(\.description))",
        ]))
        let bluez = self.bluez, logger = self.logger
        loop.spawned.append {
            do { try await bluez.disconnect(device.path) } catch {
                logger.notice("Disconnect failed", metadata: .journal([.error: "\(error)"]))
            }
            return []
        }
    }

    /// What the link shows of `key` when it has no object for it
    /// (``GattGrace/Absence``); nil when the characteristic is there.
    func absence(of key: CharacteristicKey, on device: Device) async -> GattGrace.Absence? {
        let mirror = await bluez.mirror
        var seen: Set<BluetoothUUID> = []
        for service in mirror.services(of: device.path) where (try? BluetoothUUID(parsing: service.uuid)) == key.service {
            for characteristic in mirror.characteristics(of: service.path) {
                if let uuid = try? BluetoothUUID(parsing: characteristic.uuid) { seen.insert(uuid) }
            }
        }
        if seen.contains(key.characteristic) { return nil }
        return GattGrace.absence(servicesResolved: device.servicesResolved, characteristicsOfService: seen)
    }

    /// The failure a characteristic's absence is reported with.
    static func unknownCharacteristic(_ key: CharacteristicKey, _ absence: GattGrace.Absence) -> ConnectionFailure {
        let why = switch absence {
        case .notInDatabase: "services are resolved and service \(key.service) has no characteristic \(key.characteristic)"
        case .databaseNotKnown: "service \(key.service) with characteristic \(key.characteristic) was not found, also after rediscovering services"
        }
        return ConnectionFailure(.notSupported, errorName: RelinkErrorName.unknownCharacteristic.rawValue, message: why)
    }

    /// A subscription the peripheral cannot serve (``GattGrace``): removed
    /// for every identifier, each told by a `subscription-failed` event (the
    /// removals and the events are one commit); the link is left alone.
    func subscriptionFailed(_ peripheral: PeripheralID, _ key: CharacteristicKey, _ absence: GattGrace.Absence) async {
        let reason = Self.unknownCharacteristic(key, absence)
        beginBatch()
        for id in core.planner.route(peripheral, characteristic: key) {
            let subscription = Subscription(identifier: id, peripheral: peripheral, characteristic: key)
            logger.warning("a subscription failed and was removed: \(reason.message)", metadata: .journal([
                .restoreID: "\(id)", .peripheral: "\(peripheral)", .characteristic: "\(key)",
                .error: "\(reason.errorName)", .decision: "subscription-failed",
            ]))
            do {
                try await commit([.removeSubscription(subscription)])
                try await emit(.subscriptionFailed(peripheral: peripheral, characteristic: key, reason: reason), to: [id])
            } catch {
                logger.error("cannot store a failed subscription", metadata: .journal([
                    .restoreID: "\(id)", .peripheral: "\(peripheral)", .characteristic: "\(key)", .error: "\(error)",
                ]))
            }
            await run(core.planner.unsubscribe(subscription))
        }
        endBatch()
        core.gattGrace.forget(peripheral, key)
        await applyAutoConnect(renew: false)
        refreshViewers(of: peripheral)
    }
}
