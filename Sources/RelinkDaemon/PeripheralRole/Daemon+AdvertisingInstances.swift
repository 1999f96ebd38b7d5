import BlueZ
import RelinkModel

// The controller's advertising instances (issue 23): bluetoothd gives each
// registered advertisement one and refuses one past the controller's
// number (`NotPermitted` "Maximum advertisements reached", bluetoothd 5.66
// `src/advertising.c`; `LEAdvertisingManager1.SupportedInstances` is what
// is left). A program's `StartAdvertising` past it is refused
// (`AdvertisingLimitReached`) and nothing changes. An advertisement relinkd
// restores (after a restart of relinkd or bluetoothd, a power cycle) that
// does not fit is kept, journalled and shown in `State` as waiting; its
// services are registered; it starts as soon as another advertisement of
// relinkd's stops.
extension Daemon {
    /// Whether bluetoothd refused an advertisement for want of an instance.
    static func isAdvertisingLimit(_ error: BlueZError) -> Bool { error.name == "org.bluez.Error.NotPermitted" }

    /// The identifier's services are registered and its advertisement does
    /// not fit: it waits (journalled, never dropped).
    func advertisementWaits(_ id: RestoreIdentifier, _ refusal: BlueZError, reason: String) {
        peripheralRole.advertisementsWaiting.insert(id)
        logger.warning("the controller has no advertising instance left: the advertisement waits until another stops", metadata: .journal([
            .restoreID: "\(id)", .decision: "\(reason)", .event: "advertisement-waiting", .error: "\(refusal.name): \(refusal.message)",
        ]))
    }

    /// An advertising instance may be free: the waiting advertisements are
    /// registered, in identifier order, while they fit (their services
    /// stay registered as they are).
    func startWaitingAdvertisements() async {
        for id in peripheralRole.advertisementsWaiting.sorted() {
            guard peripheralRole.records[id]?.advertisement != nil else {
                peripheralRole.advertisementsWaiting.remove(id)
                continue
            }
            do {
                try await bluez.registerAdvertisement(root: Self.hostedRoot(id), adapter: adapterPath)
                peripheralRole.advertisementsWaiting.remove(id)
                logger.info("an advertising instance is free: the waiting advertisement started", metadata: .journal([
                    .restoreID: "\(id)", .event: "advertisement-started",
                ]))
            } catch let error as BlueZError where Self.isAdvertisingLimit(error) {
                return
            } catch {
                logger.error("bluetoothd refused a waiting advertisement", metadata: .journal([.restoreID: "\(id)", .error: "\(error)"]))
            }
        }
    }

    /// `State`'s and `Register`'s peripheral-role document: the stored
    /// record, with ``PeripheralManagerRecord/advertisementWaiting`` set
    /// while its advertisement waits for an advertising instance.
    func peripheralRoleJSON(_ id: RestoreIdentifier) -> String {
        var record = peripheralRole.records[id] ?? PeripheralManagerRecord()
        record.advertisementWaiting = peripheralRole.advertisementsWaiting.contains(id)
        return record.json
    }
}
