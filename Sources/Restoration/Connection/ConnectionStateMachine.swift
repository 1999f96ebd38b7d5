public import RelinkModel
/// The reconnect policy of one connection intent, as a pure value.
///
/// In the style of Hummingbird's `HTTPConnectionStateMachine`: every input is
/// a mutating method that returns the ``Action``s to perform, in order, and
/// does no I/O. An actor in the daemon owns the value, carries out the
/// actions (BlueZ calls, timers, store writes, journal) and feeds the results
/// back as inputs. Time is read from `clock`; jitter from `random`.
///
/// A **round** tries the strategies of ``ConnectionOptions/strategies`` in
/// order, each a **step** with its own timeout:
/// * known identifier: `lookUpKnownDevice` → found: `connect`; missing: next step
///   (skipped when no address is stored);
/// * already connected: `lookUpConnected(services:)` → a candidate chosen by
///   ``CandidateChoice``: `connect` (BlueZ answers at once for a connected
///   device, so the link is adopted, not torn down); none or ambiguous: next step;
/// * scan: `startScan` → an advertisement meeting the ``MatchRule``:
///   `stopScan`, `connect`; the timeout: next step.
///
/// A connect reply leads to waiting for services; `ServicesResolved` to
/// connected (`armSubscriptions`, `emit(.connected)`, `persist`). A round
/// that ends without a link backs off per ``BackoffPolicy`` by the class of
/// its last failure, then starts the next round. Failure classes:
/// notReady waits for ``adapterPowered(_:)``; deviceGone jumps to the scan
/// step; notSupported/notPermitted fail at once; the rest go to the next step.
///
/// With ``ConnectionDeadline/pendingUntilCancelled`` the intent never gives up:
/// between rounds it asks for BlueZ background auto-connect when the known
/// device exists in BlueZ, else a low-duty scan. With
/// ``ConnectionDeadline/after(_:)`` it fails with a timeout when the link is
/// not up in time (counted from start and from each disconnect).
///
/// `failedToConnect` is emitted only when the intent gives up, not on every
/// failed attempt (each attempt is journalled through `log` instead), so a
/// lock pending for days does not fill the outbox.
public struct ConnectionStateMachine<C: Clock>: Sendable where C.Duration == Duration {
    public let intent: ConnectionIntentID
    public internal(set) var options: ConnectionOptions
    /// The address last used to reach the peripheral (re-learned by scans).
    public internal(set) var knownAddress: BluetoothAddress?
    public internal(set) var state: State
    /// The current round, 1-based (0 before the first).
    public internal(set) var attempt: Int = 0
    /// Index into ``ConnectionOptions/strategies`` of the current step.
    public internal(set) var stepIndex: Int = 0
    /// Failed rounds since the last connection, saturating at the length of
    /// the longest backoff list (so memory stays constant over any run).
    public internal(set) var consecutiveFailedRounds: Int = 0
    /// The deadline instant, when the intent has one and the link is not up.
    public internal(set) var deadline: C.Instant?

    let clock: C
    var random: any RandomSource
    var roundFailure: ConnectionFailure?
    /// Whether the last known-device lookup found the device in BlueZ.
    var knownDevicePresent = false
    /// The address background auto-connect is armed for.
    var backgroundAutoConnect: BluetoothAddress?
    /// bluetoothd restarted or the adapter power-cycled since it was asked.
    var backgroundAutoConnectNeedsRenewal = false
    var scanActive = false
    var phaseTimer: TimerToken?
    var deadlineTimer: TimerToken?
    var nextTokenID: UInt64 = 1
    /// Restored as connected after a relinkd restart and not yet resolved.
    var restoringConnected = false
    /// This intent's own `connect` (not an adoption) whose reply has not
    /// come, and its route. A link to that device found up meanwhile (by the
    /// already-connected step, after the step was ended by a `Connected=false`
    /// of an older link) is this `connect`'s doing, not another program's:
    /// relinkd tears it down as its own (real bluetoothd 5.66 after a crash:
    /// the kernel kept the link, the new bluetoothd dropped it and answered
    /// relinkd's `Connect` with a new one).
    var ownConnect: OwnConnect?
    /// When the current link came up (services resolved), for telling a
    /// short link from a lasting one when it goes down.
    var linkUpSince: C.Instant?
    /// Whether the current link carried a value or a GATT reply
    /// (``linkCarried()``): a short link that did is not counted as short.
    var linkWorked = false
    /// Links in a row that went down within ``shortLinkLimit`` of coming
    /// up having carried nothing, saturating like ``consecutiveFailedRounds``.
    public internal(set) var consecutiveShortLinks: Int = 0

    /// See ``ownConnect``.
    struct OwnConnect: Sendable, Hashable {
        var address: BluetoothAddress
        var route: ConnectRoute
    }

    /// - Parameters:
    ///   - knownAddress: the stored address, if the peripheral was ever seen.
    ///   - random: jitter source; a randomly seeded one by default.
    public init(intent: ConnectionIntentID, options: ConnectionOptions, knownAddress: BluetoothAddress?, clock: C, random: any RandomSource = SplitMixRandom()) {
        self.intent = intent
        self.options = options
        self.knownAddress = knownAddress
        self.clock = clock
        self.random = random
        self.state = .idle
    }

    /// The strategy of the current step, while a round is under way.
    public var currentStrategy: Strategy? {
        switch state {
        case .trying(let strategy): strategy
        case .connecting, .waitingForServices:
            stepIndex < options.strategies.count ? options.strategies[stepIndex] : nil
        default: nil
        }
    }

    /// Whether a low-duty or strategy scan of this intent is registered.
    public var isScanning: Bool { scanActive }

    /// The address background auto-connect is armed for, if any.
    public var backgroundAutoConnectAddress: BluetoothAddress? { backgroundAutoConnect }

    /// The match rule with the stored address filled in.
    var matchRule: MatchRule {
        var rule = options.match
        if rule.address == nil { rule.address = knownAddress }
        if rule.services.isEmpty && !rule.hasAdvertisementCriteria && rule.address == nil { rule.services = options.services }
        return rule
    }

    /// The scan the scan strategy asks for.
    var strategyScan: ScanIntent { ScanIntent(services: options.services) }

    // MARK: - Start and cancel

    /// Starts the intent (a client's connect, or a restart restoring it).
    /// - Parameter restoringConnected: the store had it connected before a
    ///   relinkd restart. The first link is then reported as `restored`; if
    ///   the first round ends without one, `disconnected` is reported once.
    /// Ignored (logged) unless the machine is idle.
    public mutating func start(restoringConnected: Bool = false) -> [Action] {
        guard case .idle = state else { return [log(.ignored(input: "start"))] }
        var actions: [Action] = [log(.started(restoring: restoringConnected))]
        self.restoringConnected = restoringConnected
        armDeadline(into: &actions)
        actions.append(.persist(record(.pending)))
        beginRound(into: &actions)
        return actions
    }

    /// Cancels the intent from any state; a no-op when already cancelled.
    ///
    /// A link or pending connect of this intent is disconnected, except a
    /// link adopted from another client (route `alreadyConnected`), one this
    /// intent only shares (state `sharing`), or one other intents share
    /// (`linkSharedWithOthers`, from the ownership registry): those stay up
    /// for their other users. Emits `disconnected`
    /// (reason nil) when a link had been reported up.
    public mutating func cancel(linkSharedWithOthers: Bool = false) -> [Action] {
        if case .cancelled = state { return [] }
        var actions: [Action] = []
        var wasUp = false
        switch state {
        case .connected(let address, let route):
            wasUp = true
            if route != .alreadyConnected && !linkSharedWithOthers { actions.append(.disconnect(address)) }
        case .connecting(let address, let route), .waitingForServices(let address, let route):
            if route != .alreadyConnected && route != .sharedLink && !linkSharedWithOthers { actions.append(.disconnect(address)) }
        case .sharing(_, let link):
            wasUp = link != nil
        default:
            break
        }
        stopActivity(into: &actions)
        cancelDeadline(into: &actions)
        stopBackgroundAutoConnect(into: &actions)
        if wasUp { actions.append(.emit(.disconnected(peripheral: intent.peripheral, reason: nil))) }
        actions.append(log(.cancelled))
        state = .cancelled
        actions.append(.persist(record(.cancelled)))
        return actions
    }
}
