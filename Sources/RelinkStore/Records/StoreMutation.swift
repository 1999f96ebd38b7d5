import Foundation
public import RelinkModel

/// One change to the store. A list of mutations passed to
/// `RelinkStore.apply(_:)` is applied in one transaction: all or nothing.
public enum StoreMutation: Hashable, Sendable {
    /// Creates the identifier, or updates owner and options of an existing one
    /// (its `createdAt` and outbox are kept).
    case putIdentifier(RestoreIdentifierRecord)
    /// Removes the identifier with its scan, connections, subscriptions and
    /// outbox. Removing an unknown identifier does nothing.
    case removeIdentifier(RestoreIdentifier)
    /// Sets (replaces) the identifier's scan intent. The store keeps its
    /// services and `allowDuplicates`; an intent with an RSSI limit or low
    /// duty (which only a connection intent's scan has) is refused.
    case putScanIntent(RestoreIdentifier, ScanIntent)
    /// Stops the identifier's scan; nothing if there is none.
    case removeScanIntent(RestoreIdentifier)
    /// Sets (replaces) the identifier's connection-event registration.
    case putConnectionEvents(RestoreIdentifier, ConnectionEventRegistration)
    /// Removes the identifier's connection-event registration; nothing if there is none.
    case removeConnectionEvents(RestoreIdentifier)
    /// Creates or updates a peripheral by its relink identifier.
    case putPeripheral(PeripheralRecord)
    /// Forgets a peripheral with every connection intent and subscription on it.
    case removePeripheral(PeripheralID)
    /// Creates or replaces the connection intent of (identifier, peripheral).
    case putConnectionIntent(ConnectionIntent)
    /// Cancels a connection intent; nothing if there is none.
    case removeConnectionIntent(RestoreIdentifier, peripheral: PeripheralID)
    /// Adds a subscription (stamped with the time it is applied); adding an
    /// existing one does nothing.
    case addSubscription(Subscription)
    /// Removes a subscription; nothing if there is none.
    case removeSubscription(Subscription)
    /// Appends an event to the identifier's outbox; the store assigns the
    /// sequence number (unless the draft carries one) and drops the oldest
    /// events past the bound.
    case appendEvent(OutboxEventDraft)
    /// Deletes the identifier's events up to and including `through`; a
    /// `through` the store has not numbered yet (numbered by the daemon,
    /// not stored) moves the next sequence number above it.
    case acknowledgeEvents(RestoreIdentifier, through: Int64)
    /// Counts events that were numbered but never stored (their commit
    /// failed: a full disk, a read-only store) as dropped: `count` is added
    /// to `dropped_total`, `range` (their numbers not yet acknowledged past,
    /// nil when all are) joins the dropped range, and the next sequence
    /// number moves above it so that those numbers are never handed out
    /// again. Unknown identifiers are ignored (it may be gone since).
    case countUnstoredEvents(RestoreIdentifier, count: Int64, range: ClosedRange<Int64>?)
    /// Records the adapter status last announced to programs for an
    /// adapter (such as `hci0`), replacing the one before (stamped with the
    /// time it is applied).
    case putAdapterState(adapter: String, AdapterStatus)
    /// Records the GATT database last read from a peripheral, replacing the
    /// one before (kept until the peripheral is removed).
    case putGattDatabase(PeripheralID, GattDatabase)
    /// Records an identifier's peripheral role, replacing the one before;
    /// an empty record (no services, not advertising) removes it.
    case putPeripheralManager(RestoreIdentifier, PeripheralManagerRecord)
    /// Sets an identifier's launch spec (docs/relaunch.md), replacing the
    /// one before; nil removes it.
    case putLaunchSpec(RestoreIdentifier, LaunchSpec?)
    /// Stores a new transfer with its bytes (its identifier and peripheral must exist).
    case putTransfer(TransferRecord)
    /// Moves a transfer's confirmed offset; nothing for a transfer that is gone.
    case setTransferOffset(TransferID, confirmed: Int)
    /// Forgets a transfer with its bytes; nothing for one that is gone.
    case removeTransfer(TransferID)
}

/// What a committed `apply(_:)` produced.
public struct StoreCommit: Hashable, Sendable {
    /// Sequence numbers given to the `.appendEvent` mutations, in order.
    public var appendedSequences: [Int64]
    /// Everything the mutations did to outboxes, in order.
    public var outboxEffects: [OutboxEffect]
    public init(appendedSequences: [Int64], outboxEffects: [OutboxEffect] = []) {
        self.appendedSequences = appendedSequences
        self.outboxEffects = outboxEffects
    }
}
