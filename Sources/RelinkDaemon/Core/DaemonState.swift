import BlueZ
import DBus
import Foundation
import Logging
import RelinkModel
import RelinkStore
import Restoration

// The daemon's state, in pieces a reader can name. Each is a plain value the
// daemon actor owns; the machines and the core's policies, and the decisions
// made with them, are the ``DaemonCore`` (module DaemonCore).

/// What the daemon works with: set once, at start.
struct DaemonEnvironment: Sendable {
    /// The BlueZ port (``BlueZ/BlueZClient``, or a fake in tests).
    let bluez: any BlueZPort
    /// The durable store.
    let store: RelinkStore
    /// The adapter's object path (`/org/bluez/hci0`).
    let adapterPath: ObjectPath
    /// The adapter's name (`hci0`).
    let adapterName: String
    /// Where every decision is logged.
    let logger: Logger
    /// The machines' and timers' clock (real time in relinkd).
    let clock: DaemonClock
    /// How programs are started for their launch spec; nil: relinkd starts none.
    let launcher: (any ProgramLauncher)?
    /// What each user but root may keep in relinkd (relinkd.conf).
    let bounds: UserBounds
    /// One pairing per device at a time (``PairingGate``).
    let pairings = PairingGate()
    /// The agent's capability and the requests forwarded to clients (``PairingRequestBroker``).
    let pairingRequests = PairingRequestBroker()
}

/// What relinkd knows of each peripheral.
struct PeripheralIndex {
    /// The stored rows, by relink's identifier.
    var peripherals: [PeripheralID: PeripheralRecord] = [:]
    /// The identifier at each address (text, as BlueZ writes it): looked up for every value.
    var peripheralByAddress: [String: PeripheralID] = [:]
    /// Both names of each known peripheral, with when each was seen.
    var peripheralNames: [PeripheralID: PeripheralNames] = [:]
    /// Parsed routing facts per characteristic object (``Daemon/valueRoute(_:)``).
    var valueRoutes: [ObjectPath: ValueRoute] = [:]
    /// Why bluetoothd says a device's link ended (BlueZ 5.83 and later),
    /// from that signal to the `Connected=false` it comes just before.
    var linkEndCauses: [ObjectPath: LinkEndCause] = [:]
    /// The link each peripheral was last paired on demand for a
    /// subscription on: once per link, never a loop (Daemon+PairingOnDemand.swift).
    var pairedOnDemand: [PeripheralID: OnDemandPairing] = [:]
    /// Each intent's bond as stored (store v11; Daemon+IntentBond.swift).
    var intentBonds: [ConnectionIntentID: IntentBond] = [:]
}

/// The loop's own bookkeeping.
struct LoopState {
    /// True while the loop waits for its next input (see ``Daemon/takeInline(_:)``).
    var waiting = false
    /// True once restoring after start-up is complete.
    var isReady = false
    /// Machine inputs that answer an action at once (lookups), handled after
    /// the current action list.
    var immediate: [(ConnectionIntentID, Machine.Input)] = []
    /// Child tasks to start after the current input.
    var spawned = SpawnList()
    /// The task sleeping until the earliest machine timer, if one is armed.
    var timerSleeper: TimerSleeper?
    /// During a large start-up's restore (more than
    /// ``Daemon/quietStartupIntents`` intents): how many progress decisions
    /// of each kind went to debug level instead of info; nil otherwise.
    var quietDecisions: [String: Int]?
    /// During start-up's restore: each intent's row as loaded from the
    /// store, so that a machine's first `persist` of the same row is not
    /// written again (10,000 identical rows were a 0.7 s commit before
    /// READY); nil otherwise.
    var loadedIntents: [ConnectionIntentID: ConnectionIntent]?
}

/// The child tasks to start after the current input, in order.
struct SpawnList {
    private var items: [@Sendable () async -> [DaemonInput]] = []

    var isEmpty: Bool { items.isEmpty }

    mutating func append(_ work: @escaping @Sendable () async -> [DaemonInput]) {
        items.append(work)
    }

    /// The work to start, in order, and an empty list.
    mutating func take() -> [@Sendable () async -> [DaemonInput]] {
        defer { items = [] }
        return items
    }
}

/// The one task that sleeps until the earliest machine timer
/// (``DaemonCore/timers``), and the instant it wakes at.
struct TimerSleeper {
    /// When it wakes and hands the loop ``DaemonInput/timersDue``.
    var instant: DaemonClock.Instant
    /// Cancelled when an earlier timer is scheduled, and when the loop ends.
    var task: Task<Void, Never>
}

/// Store writes gathered, in flight, and their outcomes.
struct WriteState {
    /// Store writes, StartNotify calls and start-up adoptions gathered to be
    /// carried out together (see ``RestoreBatch``).
    var batch = RestoreBatch()
    /// Store commits in flight.
    let commits = CommitPipeline()
    /// By ticket, the requests in flight and who waits.
    var inFlight: [UInt64: InFlightCommit] = [:]
    /// Outcomes of the commits ``Daemon/commitNow(_:)`` waits for, by ticket.
    var commitOutcomes: [UInt64: Result<StoreCommit, StoreError>] = [:]
    /// Events whose commit failed, until the store counts them as dropped.
    var unstored = UnstoredEvents()
}

/// Failures an operator asks about.
struct HealthLog {
    /// Each intent's last failure since its last link, with when it came
    /// (for `Status` and `STATUS=`: why a link is down). Cleared when the
    /// link is up.
    var intentFailures: [ConnectionIntentID: (failure: ConnectionFailure, at: Date)] = [:]
    /// Stored rows the start-up load could not read: kept in the store, not
    /// loaded, journalled, and shown in `Status`.
    var unreadableRows: [UnreadableRow] = []
}
