import BlueZ
import Logging
import RelinkModel

// Registering the peripheral role with bluetoothd: every identifier at
// start-up, after bluetoothd restarted and after the adapter powered on;
// one identifier after a change; again when bluetoothd adds the adapter's
// managers to it after a refusal for want of them.
extension Daemon {
    /// Registers every identifier's application and advertisement with
    /// bluetoothd: at start-up (before relinkd takes its bus name, so before
    /// any client is back), after bluetoothd restarted, after the adapter
    /// powered on. bluetoothd forgets them at each restart; registering
    /// again is harmless.
    func hostAll(reason: String) async {
        for id in peripheralRole.records.keys.sorted() {
            guard !Task.isCancelled else { return }  // stopping: each is a call to bluetoothd
            await host(id, reason: reason)
        }
    }

    /// Registers one identifier's application (or removes it when it has
    /// nothing left to host). A refusal is journalled; nothing else changes.
    @discardableResult
    func host(_ id: RestoreIdentifier, reason: String) async -> BlueZError? {
        let record = peripheralRole.records[id] ?? PeripheralManagerRecord()
        let root = Self.hostedRoot(id)
        peripheralRole.advertisementsWaiting.remove(id)
        peripheralRole.awaitingManager.remove(id)
        do {
            if record.isEmpty {
                try await bluez.unhost(root: root, adapter: adapterPath)
            } else {
                try await bluez.host(HostedApplication(root: root, services: record.services, advertisement: record.advertisement), adapter: adapterPath)
                logger.info("peripheral role registered with bluetoothd", metadata: .journal([
                    .restoreID: "\(id)", .count: "\(record.services.count)", .decision: "\(reason)",
                    .event: record.advertisement == nil ? "services" : "services-and-advertisement",
                ]))
            }
            return nil
        } catch let error as BlueZError where Self.isAdvertisingLimit(error) && record.advertisement != nil {
            advertisementWaits(id, error, reason: reason)
            return error
        } catch let error as BlueZError where Self.managerMissing(error) {
            peripheralRole.awaitingManager.insert(id)
            logger.notice("bluetoothd has no peripheral-role manager on the adapter yet: registered when it appears", metadata: .journal([
                .restoreID: "\(id)", .error: "\(error)", .decision: "awaiting-manager",
            ]))
            return error
        } catch {
            logger.error("bluetoothd refused the peripheral role's registration", metadata: .journal([.restoreID: "\(id)", .error: "\(error)"]))
            return error as? BlueZError ?? BlueZError(name: "org.bluez.Error.Failed", message: "\(error)")
        }
    }

    /// Whether bluetoothd refused a registration because the adapter object
    /// has no `GattManager1` or `LEAdvertisingManager1` (yet).
    nonisolated static func managerMissing(_ error: BlueZError) -> Bool {
        ["org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownObject",
         "org.freedesktop.DBus.Error.UnknownInterface"].contains(error.name)
    }

    /// bluetoothd added a peripheral-role manager to relinkd's adapter: the
    /// identifiers whose registration found none are registered now.
    func managerAppeared(_ interface: String) async {
        for id in peripheralRole.awaitingManager.sorted() {
            guard !Task.isCancelled else { return }
            await host(id, reason: "\(interface) appeared")
        }
    }
}
