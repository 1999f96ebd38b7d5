import BlueZ
import DBus
import Logging
import RelinkModel

// The peripheral role when relinkd's adapter is powered on again (issue 24,
// item 2: a bonded central among the restored subscribers). bluetoothd 5.66
// keeps an application's registration across a power cycle, and with it
// the CCCD states of the bonded centrals subscribed to its characteristics
// (`src/gatt-database.c`: `att_disconnected` keeps a bonded central's
// device state; the database lives as long as the adapter). Registering
// the application anew would remove them (`gatt_db_service_removed`,
// `remove_device_ccc`), and the bonded central would have to subscribe
// again: so only the advertisement, which the power-off ended, is
// registered again while the services still are.
extension Daemon {
    /// The adapter powered on: each identifier's advertisement registered
    /// again, its services too only when bluetoothd no longer has them.
    func hostAfterPowerOn() async {
        let reason = "adapter powered on"
        for id in peripheralRole.records.keys.sorted() {
            let root = Self.hostedRoot(id)
            guard let record = peripheralRole.records[id], !record.isEmpty,
                  await bluez.servicesRegistered(root: root, adapter: adapterPath) else {
                await host(id, reason: reason)
                continue
            }
            guard record.advertisement != nil else { continue }
            peripheralRole.advertisementsWaiting.remove(id)
            do {
                try await bluez.registerAdvertisement(root: root, adapter: adapterPath)
                logger.info("advertisement registered again; the services stayed registered", metadata: .journal([
                    .restoreID: "\(id)", .decision: "\(reason)", .event: "advertisement-started",
                ]))
            } catch let error as BlueZError where Self.isAdvertisingLimit(error) {
                advertisementWaits(id, error, reason: reason)
            } catch {
                logger.error("bluetoothd refused the advertisement", metadata: .journal([.restoreID: "\(id)", .error: "\(error)"]))
            }
        }
    }
}
