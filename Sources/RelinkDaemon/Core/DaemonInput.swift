import BlueZ
import DBus
import Restoration

/// One input of the daemon's loop. Everything that changes the daemon's
/// state arrives as one of these, on one stream, handled in order.
enum DaemonInput: Sendable {
    /// Something bluetoothd did, as the BlueZ mirror saw it.
    case bluez(BlueZEvent)
    /// An input for one connection intent's machine (operation results, timers).
    case machine(ConnectionIntentID, Machine.Input)
    /// The grace period for a subscribed characteristic to appear on a link ended.
    case gattCheck(PeripheralID, generation: UInt64)
    /// A StartNotify issued at the end of a batch returned (nil: success).
    case notifyDone(RestoreBatch.Notify, HeldSessions.Issued, ConnectionFailure?)
    /// Commit the store writes gathered since the last commit (notified
    /// values of several inputs: one commit for all of them).
    case flushCommits
    /// Commits handed to the store have returned (``CommitPipeline``).
    case commitsDone
    /// A control call, answered through the continuation after its store commit.
    case control(ControlRequest, CheckedContinuation<ControlReply, Never>)
    /// The window in which an identifier's outbox signals are coalesced
    /// ended (``SignalThrottle``).
    case outboxWindowEnded(RestoreIdentifier)
    /// A client API call, answered through the continuation after its store commit.
    case api(APIRequest, APICaller, CheckedContinuation<APIReply, Never>)
    /// A `Register`/`Watch` reply was sent: send the client the stored
    /// events above `after`, then live ones.
    case startDelivery(RestoreIdentifier, client: String, after: Int64)
    /// A unique name left the bus: detach it everywhere.
    case clientLeft(String)
    /// Test hook: the loop blocks for this long, as a hung loop would, so
    /// that tests can see the watchdog pings stop.
    case stallForTesting(Duration)
}

/// What a control call asks for, with every argument validated.
enum ControlRequest: Sendable {
    case register(CoreIdentifier, uid: UInt32)
    case connect(CoreIdentifier, BluetoothAddress, ConnectionOptions)
    case cancel(CoreIdentifier, BluetoothAddress)
    case subscribe(CoreIdentifier, BluetoothAddress, CharacteristicKey)
    case scan(CoreIdentifier, CoreScanIntent)
    case stopScan(CoreIdentifier)
    case events(CoreIdentifier, after: Int64)
    case ack(CoreIdentifier, upto: Int64)
    case status
}

/// The D-Bus reply values of a control call, or its typed error.
typealias ControlReply = Result<[DBusValue], ControlError>
