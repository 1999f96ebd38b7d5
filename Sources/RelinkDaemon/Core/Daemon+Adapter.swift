import BlueZ
import DBus
import Logging
import RelinkModel
import RelinkStore
import Restoration
import Systemd

// The adapter's state as programs are told of it (``AdapterWatch``): what
// the BlueZ layer reports, announced to every identifier, stored, and
// shown on Manager1.
extension Daemon {
    /// Start-up: watches the adapter and announces its status when it is
    /// not the one last announced (stored). Inside the start-up batch, so
    /// the events come before any `restored` or `connected` and are
    /// committed with them.
    func startWatchingAdapter(lastAnnounced stored: AdapterStatus?) async {
        let status = await bluez.watchAdapter(adapterPath)
        queue(core.handle(.adapterFound(status, lastAnnounced: stored)))
    }

    /// The BlueZ layer reported a new status of a watched adapter.
    func adapterStatusReported(_ path: ObjectPath, _ status: AdapterStatus) {
        guard path == adapterPath else { return }
        queue(core.handle(.adapterReported(status)))
    }

    /// Tells programs of a new status: one journal line, `Manager1`'s
    /// properties, and an `adapter-state` event appended to every
    /// identifier's outbox in one commit with the status stored as the
    /// last one announced.
    func announce(_ announcement: AdapterWatch.Announcement, to identifiers: [RestoreIdentifier]) {
        let status = announcement.status
        let level: Logger.Level = status.state == .poweredOn ? .notice : .warning
        logger.log(level: level, "adapter \(adapterName) is \(status.state.rawValue), was \(announcement.previous?.state.rawValue ?? "not known")",
                   metadata: Self.journalFields(announcement, adapter: adapterName))
        publisher?.setAdapterStatus(status)
        do {
            var request = try Self.eventRequest(.adapterState(adapter: adapterName, status: status), to: identifiers)
            request.mutations.append(.putAdapterState(adapter: adapterName, status))
            enqueueGathered(request)
        } catch {
            logger.error("cannot store the adapter's state", metadata: .journal([.adapter: "\(adapterName)", .error: "\(error)"]))
        }
    }

    /// The journal fields of an announcement; one of an adapter gone from
    /// bluetoothd (`missing`) carries the catalog's "adapter removed"
    /// `MESSAGE_ID` (systemd/relink.catalog), so that an operator's
    /// `journalctl MESSAGE_ID=...` finds it.
    static func journalFields(_ announcement: AdapterWatch.Announcement, adapter: String) -> Logger.Metadata {
        let status = announcement.status
        let fields: Logger.Metadata = .journal([
            .adapter: "\(adapter)", .adapterState: "\(status.state.rawValue)", .adapterRoles: "\(rolesText(status))",
            .decision: "adapter-state-changed",
        ])
        guard status.state == .missing, announcement.previous?.state != .missing else { return fields }
        return fields.merging(RelinkMessageID.adapterRemoved.metadata) { $1 }
    }

    /// `central,peripheral`: the journal's `RELINK_ADAPTER_ROLES`.
    static func rolesText(_ status: AdapterStatus) -> String {
        status.roles.map(\.rawValue).joined(separator: ",")
    }
}
