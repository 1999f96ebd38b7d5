import BlueZ
import DBus
import Restoration
import Synchronization
import RelinkModel
import RelinkAPI

/// One input of the daemon's loop. Everything that changes the daemon's
/// state arrives as one of these, on one stream, handled in order.
enum DaemonInput: Sendable {
    /// Something bluetoothd did, as the BlueZ mirror saw it.
    case bluez(BlueZEvent)
    /// An input for one connection intent's machine (operation results, timers).
    case machine(ConnectionIntentID, Machine.Input)
    /// The grace period for a subscribed characteristic to appear on a link ended.
    case gattCheck(PeripheralID, generation: UInt64)
    /// A link whose services stopped being resolved while `Connected`
    /// stayed true has had ``Daemon/halfOpenGrace`` to go down by itself.
    case halfOpenCheck(ObjectPath, BluetoothAddress)
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
    /// `Status` or the liveness probe: answered with a snapshot at once,
    /// without waiting for the store (``StatusSnapshot``).
    case status(LoopAnswer<StatusSnapshot>)
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
    /// Nothing to handle: wakes the loop to start the child tasks that an
    /// input handled outside it (a value taken inline) asked for.
    case startSpawned
    /// The earliest machine timer is due: fire those due now (Daemon+Timers.swift).
    case timersDue
    /// The delay after start-up is over: register the auto-connect profile
    /// the restored intents asked for (``Daemon/startupAutoConnectDelay``).
    case startupAutoConnect
    /// relinkd's own `Disconnect()` of this device returned: BlueZ has
    /// turned its background auto-connect off, so if the device is still
    /// held that way, the profile is registered anew.
    case renewAutoConnect(BluetoothAddress)
    /// A peripheral's GATT objects have been still for
    /// ``Daemon/gattSettleTime`` since the change of that generation: read
    /// its database.
    case gattDatabaseSettled(PeripheralID, generation: UInt64)
    /// The peripheral role: bluetoothd's requests, answer bounds, updates sent.
    case peripheralRole(PeripheralRoleInput)
    /// Relaunch: the bus answered a start, or a relaunch timer fired.
    case relaunch(RelaunchInput)
    /// A transfer's chunk came back from BlueZ, or its retry delay passed.
    case transfer(TransferInput)
    /// relinkd's agent asks about a pairing: the event to the client;
    /// replies whether it was handed out (``Daemon/pairingRequestForwarded(_:_:_:_:)``).
    case pairingRequest(RestoreIdentifier, PeripheralID, UInt64, AgentRequest, CheckedContinuation<Bool, Never>)
}

/// The loop's input stream, counting what was yielded and not yet handled
/// to the end, so that an input may skip the queue (be handled at once, on
/// the I/O thread, ``Daemon/takeInline(_:)``) only when it would have been
/// next anyway.
final class DaemonInbox: Sendable {
    private let continuation: AsyncStream<DaemonInput>.Continuation
    private let unhandled = Atomic<Int>(0)
    private let highWater = Atomic<Int>(0)

    /// How many inputs wait (or are being handled), and the most there
    /// ever were since relinkd started: `Status`'s `inbox`. The inbox has
    /// no bound by count (docs/architecture.md, "Queues and their bounds"):
    /// this is how an operator sees it grow.
    struct Depth: Sendable, Hashable {
        /// Inputs yielded and not yet handled to the end.
        var queued: Int
        /// The largest `queued` ever reached.
        var highWater: Int
    }

    init(_ continuation: AsyncStream<DaemonInput>.Continuation) {
        self.continuation = continuation
    }

    @discardableResult
    func yield(_ input: DaemonInput) -> AsyncStream<DaemonInput>.Continuation.YieldResult {
        let queued = unhandled.add(1, ordering: .sequentiallyConsistent).newValue
        var seen = highWater.load(ordering: .relaxed)
        while queued > seen {
            let (exchanged, original) = highWater.compareExchange(expected: seen, desired: queued, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
        let result = continuation.yield(input)
        if case .terminated = result { unhandled.subtract(1, ordering: .sequentiallyConsistent) }
        return result
    }

    /// The loop handled one input to the end.
    func handled() { unhandled.subtract(1, ordering: .sequentiallyConsistent) }

    /// The queue now and its high-water mark.
    var depth: Depth {
        Depth(queued: unhandled.load(ordering: .sequentiallyConsistent), highWater: highWater.load(ordering: .relaxed))
    }

    /// Whether every input yielded so far has been handled.
    var isDrained: Bool { unhandled.load(ordering: .sequentiallyConsistent) == 0 }
}

/// What a control call asks for, with every argument validated.
enum ControlRequest: Sendable {
    case register(RestoreIdentifier, uid: UInt32)
    case connect(RestoreIdentifier, BluetoothAddress, ConnectionOptions)
    case cancel(RestoreIdentifier, BluetoothAddress)
    case subscribe(RestoreIdentifier, BluetoothAddress, CharacteristicKey)
    case scan(RestoreIdentifier, ScanIntent)
    case stopScan(RestoreIdentifier)
    case events(RestoreIdentifier, after: Int64)
    case ack(RestoreIdentifier, upto: Int64)
}

/// The D-Bus reply values of a control call, or its typed error.
typealias ControlReply = Result<[DBusValue], RelinkError>
