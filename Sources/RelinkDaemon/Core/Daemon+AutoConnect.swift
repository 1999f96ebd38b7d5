import BlueZ
import DBus
import Foundation
import Logging
import RelinkStore
import Restoration
import Systemd
import RelinkModel
import RelinkAPI

// Background auto-connect, carried out: the core's AutoConnectPolicy decides
// what to register and which devices to let go; this registers the profile
// with bluetoothd and releases the devices.
extension Daemon {
    /// Registers the auto-connect profile anew if an action of the current
    /// input asked for it (a renewal: BlueZ turns a device's auto-connect
    /// back on when a profile offering its services is registered).
    func flushAutoConnect() async {
        guard core.autoConnect.takeRenewal() else { return }
        await applyAutoConnect(renew: true)
    }

    /// Registers the auto-connect profile with the union of wanted services.
    /// Idempotent; `renew` re-registers even when unchanged (after a
    /// bluetoothd restart the machines ask again). Returns whether it
    /// registered (and so released the devices no intent wants).
    @discardableResult
    func applyAutoConnect(renew: Bool) async -> Bool {
        let services = core.autoConnect.services { address in
            peripheralID(for: address).map { core.planner.wantedServices(of: $0) } ?? []
        }
        guard let uuids = core.autoConnect.registration(for: services, renew: renew) else { return false }
        do {
            try await bluez.setAutoConnect(uuids: uuids, root: Self.autoConnectRoot)
            core.autoConnect.didRegister(uuids)
            logger.info("background auto-connect", metadata: .journal([.autoConnectUUIDs: "\(uuids)", .adapter: "\(adapterName)"]))
            // A registration puts every known device offering these
            // services back on the list, also those relinkd let go.
            await releaseFromAutoConnect(Array(known.peripheralByAddress.keys))
            return true
        } catch {
            logger.warning("cannot set background auto-connect", metadata: .journal([.error: "\(error)"]))
            return false
        }
    }

    /// Takes the devices among `addresses` that no live intent wants off
    /// bluetoothd's auto-connect list. BlueZ auto-connects by service, not
    /// by device: every known device offering a registered service is on
    /// the list, also a lock whose intent was cancelled while another lock
    /// of its model is held, and each registration puts back a device that
    /// a `Disconnect()` took off. bluetoothd would link such a device
    /// whenever it advertises and hold the link for nobody, keeping a lock
    /// that takes one central at a time from its phone app. `Disconnect()`
    /// on a device that is not connected turns its auto-connect off (unless
    /// it is `Trusted`) and touches no link; a connected one is left alone,
    /// as another program may be using it.
    func releaseFromAutoConnect(_ addresses: [String]) async {
        guard core.autoConnect.registered?.isEmpty == false, !addresses.isEmpty else { return }
        let wanted = Set(core.machines.values.filter { !$0.state.isTerminal }.compactMap { $0.knownAddress?.string })
        for address in AutoConnectPolicy.unwanted(addresses, wanted: wanted) {
            guard let device = await bluez.mirror.device(address: address, adapter: adapterPath),
                  !device.connected, !device.trusted, core.autoConnect.covers(device.uuids) else { continue }
            let bluez = self.bluez, logger = self.logger
            logger.info("background auto-connect released: no intent wants the device", metadata: .journal([
                .address: "\(address)", .decision: "auto-connect-released",
            ]))
            loop.spawned.append {
                do { try await bluez.disconnect(device.path) } catch {
                    logger.notice("Disconnect failed", metadata: .journal([.address: "\(address)", .error: "\(error)"]))
                }
                return []
            }
        }
    }
}
