import DBus
import RelinkModel

/// The transfers under way (``Daemon/startTransfer(_:_:)``), kept in the
/// store with their bytes and confirmed offsets; this is the loop's copy.
struct TransferTable: Sendable {
    /// By transfer.
    var running: [TransferID: RunningTransfer] = [:]

    /// The transfers of a peripheral, in identifier order.
    func ids(on peripheral: PeripheralID) -> [TransferID] {
        running.values.filter { $0.record.peripheral == peripheral }.map(\.record.id).sorted()
    }
}

/// One transfer under way.
struct RunningTransfer: Sendable {
    /// The transfer, its `confirmed` offset the peripheral's last confirmation.
    var record: TransferRecord
    /// A chunk was handed to BlueZ and its outcome has not come back.
    var inFlight = false
    /// When the last `transfer-progress` event went out (or it started).
    var lastProgress: DaemonClock.Instant
    /// Consecutive attempts that failed while the link stayed up (a
    /// transient refusal, the characteristic not there yet); the transfer
    /// fails after ``Daemon/transferRetryLimit``.
    var retries = 0
    /// A retry timer is pending.
    var retryPending = false
    /// The link went down since the chunk in flight was sent: its failure
    /// is the drop's, even when the link is back by the time it comes.
    var linkDropped = false
    /// The confirmed offset known to be in the store.
    var stored: Int
    /// The commit of a newer offset on its way to the store (its ticket).
    var storing: (ticket: UInt64, offset: Int)?
    /// The largest chunk to send, once the peripheral refused a longer one
    /// as too long (ATT 0x0D): a characteristic may take less than the
    /// link's largest value (bluetoothd 5.66 took 510 of 512 bytes).
    var peerLargest: Int?

    /// A transfer as started or loaded: its offset is the stored one.
    init(record: TransferRecord, lastProgress: DaemonClock.Instant) {
        self.record = record
        self.lastProgress = lastProgress
        stored = record.confirmed
    }

    /// Confirmed bytes not known to be in the store yet.
    var unstored: Int { record.confirmed - stored }
}

/// A transfer call of the client API, its arguments validated.
enum TransferRequest: Sendable {
    /// `StartTransfer`.
    case start(PeripheralRef, CharacteristicKey, data: [UInt8], withResponse: Bool, resume: Bool, chunkSize: Int?)
    /// `Transfers`.
    case list
    /// `CancelTransfer`.
    case cancel(TransferID)
}

/// What comes back to the loop about a transfer.
enum TransferInput: Sendable {
    /// A chunk ending at `end` was confirmed (`failure` nil) or refused.
    case chunkDone(TransferID, end: Int, failure: ConnectionFailure?)
    /// The retry delay after a failed attempt passed.
    case retry(TransferID)
}
