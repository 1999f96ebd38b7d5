public import RelinkModel
public import Restoration

// When programs are told the adapter's state (``AdapterWatch``): at start-up
// only when it differs from the last one announced, then at each change;
// every identifier hears it.
extension DaemonCore {
    mutating func adapterFound(_ status: AdapterStatus, lastAnnounced stored: AdapterStatus?) -> [Effect] {
        guard let announcement = adapter.start(status, lastAnnounced: stored) else { return [.adapterAsAnnounced(status)] }
        return [.announceAdapter(announcement, identifiers: identifiers.sorted())]
    }

    mutating func adapterReported(_ status: AdapterStatus) -> [Effect] {
        guard let announcement = adapter.observe(status) else { return [] }
        return [.announceAdapter(announcement, identifiers: identifiers.sorted())]
    }
}
