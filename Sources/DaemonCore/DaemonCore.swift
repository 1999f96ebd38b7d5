public import RelinkModel
public import Restoration

/// relinkd's decisions and the state they are made with, as one value with
/// no I/O (docs/architecture.md, "The daemon core").
///
/// The `Daemon` actor takes each input from its inbox, hands what this core
/// decides to ``handle(_:)``, and carries out the ``Effect``s it returns:
/// BlueZ calls, store commits, signals, the journal. Nothing here awaits,
/// reads a clock of its own or touches a file, so each decision is a table
/// test (`Tests/DaemonCoreTests`) with no bus, no BlueZ and no SQLite.
///
/// Decided here so far: a connection machine's inputs (``Input/machine(_:_:)``,
/// ``Input/peripheral(_:_:)``), a link lost (``Input/linkLost(_:_:why:cause:)``),
/// who an advertisement is for (``Input/advertised(_:)``), what a device's
/// property change means for each subsystem (``Input/deviceChanged(_:)``),
/// what a link that carried data means for its intents (``Input/linkCarried(_:)``),
/// when programs are told the adapter's state (``Input/adapterFound(_:lastAnnounced:)``,
/// ``Input/adapterReported(_:)``), what bluetoothd gone or back and the
/// adapter's power mean (``Input/bluetoothdLost``, ``Input/bluetoothdBack(_:adapterOn:)``,
/// ``Input/adapterPowered(_:)``), a link that lacks a subscribed
/// characteristic (``Input/characteristicMissing(_:_:)``,
/// ``Input/gattGraceEnded(_:generation:)``, ``Input/gattLooked(_:_:)``), the
/// bond watch (``Input/bondObserved(_:bonded:)``, ``Input/bondsAtStart(_:)``),
/// when to start a program (``Input/eventsCommitted(_:now:)`` and the other relaunch inputs),
/// when a peripheral's GATT database is read and what a new one means
/// (``Input/gattObjectsMoved(_:)``, ``Input/gattDatabaseRead(_:_:)``), and
/// subscriptions with whom to tell of their notifications' state
/// (``Input/subscribed(_:)``, ``Input/unsubscribed(_:)``,
/// ``Input/notifyFailed(_:_:_:)``), who hears of links made and lost at
/// the system level (``Input/peerLinkChanged(_:cause:)``, ``Input/peersNow(_:atStart:)``). The other areas still decide in the
/// actor's own methods and move here one by one.
public struct DaemonCore<C: Clock>: Sendable where C.Duration == Duration {
    /// A connection state machine on the daemon's clock.
    public typealias Machine = ConnectionStateMachine<C>

    /// One connection state machine per intent.
    public var machines: [ConnectionIntentID: Machine] = [:]
    /// Which intent owns a link, which share it.
    public var registry = OwnershipRegistry()
    /// Every scan wish merged into one discovery filter.
    public var scans = ScanCoordinator()
    /// Which characteristics to arm, and who gets a value.
    public var planner = SubscriptionPlanner()
    /// The registered identifiers.
    public var identifiers: Set<RestoreIdentifier> = []
    /// Each identifier's own scan.
    public var scanIntents: [RestoreIdentifier: ScanIntent] = [:]
    /// Which name each identifier resolves first.
    public var namePreferences: [RestoreIdentifier: NamePreference] = [:]
    /// Links lacking a subscribed characteristic (``GattGrace``).
    public var gattGrace = GattGrace()
    /// Background auto-connect (``AutoConnectPolicy``).
    public var autoConnect = AutoConnectPolicy()
    /// The adapter's state as programs are told of it (``AdapterWatch``).
    public var adapter = AdapterWatch()
    /// Peripherals whose current link carried a notified value or a
    /// successful StartNotify: their intents were told once for the link.
    /// Emptied per peripheral as its next link comes up.
    public internal(set) var linksCarried: Set<PeripheralID> = []
    /// Known peripherals bluetoothd has bonded (the bond watch, DaemonCore+Bonds.swift).
    public internal(set) var bonded: Set<PeripheralID> = []
    /// The GATT database read last from each peripheral, kept across restarts (DaemonCore+GattDatabase.swift).
    public internal(set) var gattDatabases: [PeripheralID: GattDatabase] = [:]
    /// Peripherals whose database is read once their objects are still: the settle timer's generation.
    var gattReads: [PeripheralID: UInt64] = [:]
    /// Who hears of links made and lost at the system level (DaemonCore+ConnectionEvents.swift).
    public var connectionEvents = ConnectionEventWatch()
    /// Launch specs and when to start programs (DaemonCore+Relaunch.swift).
    public var relaunch = Relaunch()
    /// Every machine's pending timers, earliest first: the daemon sleeps
    /// once, until the earliest (``TimerQueue``).
    public var timers = TimerQueue<C.Instant>()

    /// A core with nothing registered.
    public init() {}

    /// What the core is told.
    public enum Input: Sendable {
        /// A connection machine's input (BlueZ's report, a timer, a call).
        case machine(ConnectionIntentID, Machine.Input)
        /// The peripheral's current link carried a notified value or a StartNotify reply.
        case linkCarried(PeripheralID)
        /// Start-up found the adapter in `status`; `lastAnnounced` is the stored one.
        case adapterFound(AdapterStatus, lastAnnounced: AdapterStatus?)
        /// The BlueZ layer reported a new status of relinkd's adapter.
        case adapterReported(AdapterStatus)
        /// bluetoothd left the bus or stopped answering.
        case bluetoothdLost
        /// bluetoothd answers again; `adapterOn`: its adapter is powered.
        case bluetoothdBack(BluetoothdReturn, adapterOn: Bool)
        /// relinkd's adapter was powered on or off.
        case adapterPowered(Bool)
        /// A machine input for every intent on a peripheral (its link came
        /// up, its services resolved), in intent order.
        case peripheral(PeripheralID, Machine.Input)
        /// The link at `address` is gone (`peripheral`: the one known there,
        /// if any); `why` in words; `cause`: bluetoothd's, where it gives one.
        case linkLost(PeripheralID?, BluetoothAddress, why: String, cause: LinkEndCause?)
        /// An advertisement: a device appeared or advertised again.
        case advertised(Advertisement)
        /// One of a device's properties changed.
        case deviceChanged(DeviceChange)
        /// StartNotify found no object for a subscribed characteristic on the peripheral's link.
        case characteristicMissing(PeripheralID, CharacteristicKey)
        /// An armed characteristic's object left the peripheral's link.
        case characteristicLeft(PeripheralID, CharacteristicKey)
        /// GATT characteristics appeared on the peripheral's connected link.
        case characteristicsAppeared(PeripheralID)
        /// Notifications were armed for a characteristic on the peripheral's link.
        case notifyArmed(PeripheralID, CharacteristicKey)
        /// A StartNotify on the peripheral's current link failed (not for
        /// want of the characteristic's object or of encryption: those have
        /// their own paths); the failure as BlueZ gave it.
        case notifyFailed(PeripheralID, CharacteristicKey, ConnectionFailure)
        /// A subscription was stored.
        case subscribed(Subscription)
        /// A subscription's row was removed.
        case unsubscribed(Subscription)
        /// The GATT grace's timer of `generation` for the peripheral ended.
        case gattGraceEnded(PeripheralID, generation: UInt64)
        /// What the peripheral's link shows of its GATT database (nil: no
        /// device), read for ``Effect/lookAtGatt(_:)``.
        case gattLooked(PeripheralID, LinkGatt?)
        /// bluetoothd shows the known peripheral's device paired or bonded (`true`), or neither.
        case bondObserved(PeripheralID, bonded: Bool)
        /// Start-up read every known peripheral's bond.
        case bondsAtStart([BondAtStart])
        /// A link whose services went unresolved while it stayed `Connected`
        /// had its grace: `stillHalfOpen` is whether the device at `address`
        /// is still `Connected` with its services unresolved, as the daemon
        /// read it (`peripheral`: the one known there, if any).
        case halfOpenLooked(PeripheralID?, BluetoothAddress, stillHalfOpen: Bool)
        /// bluetoothd removed the device object of the known peripheral at
        /// `address` (also one relinkd holds as connected: seen on real
        /// bluetoothd after a controller reset).
        case deviceObjectRemoved(PeripheralID, BluetoothAddress)
        /// relinkd removed the peripheral's bond itself (`Unpair`).
        case bondForgotten(PeripheralID)
        /// relinkd owns its bus name: the stored launch specs, the starts
        /// made before it started (by bus name), the identifiers with an attached client.
        case relaunchOpened(specs: [RestoreIdentifier: LaunchSpec], startsBefore: [String: [C.Instant]],
                            attached: Set<RestoreIdentifier>, now: C.Instant)
        /// Events the store committed.
        case eventsCommitted([CommittedEvent], now: C.Instant)
        /// The bus answered the start of a bus name's program.
        case launchAnswered(String, LaunchStartOutcome, now: C.Instant)
        /// A relaunch timer of a bus name fired.
        case launchTimerFired(String, now: C.Instant)
        /// An identifier's launch spec was stored (nil: removed).
        case launchSpecStored(RestoreIdentifier, LaunchSpec?)
        /// An identifier is gone (unregistered): its relaunch is forgotten.
        case launchForgotten(RestoreIdentifier)
        /// A device's link came up or went down, or its services changed
        /// (`cause`: bluetoothd's reason for the end, where it gave one).
        case peerLinkChanged(ConnectionEventWatch.PeerLink, cause: LinkEndCause?)
        /// Every link bluetoothd shows up now, read at start-up (`atStart`) or once it is back.
        case peersNow([ConnectionEventWatch.PeerLink], atStart: Bool)
        /// An identifier's connection-event registration was stored (nil:
        /// removed, or the identifier is gone); `connectedNow` as it was registered with.
        case connectionEventsStored(RestoreIdentifier, ConnectionEventRegistration?, connectedNow: [ConnectionEventWatch.PeerLink])
        /// Start-up read the stored GATT databases.
        case gattDatabasesLoaded([PeripheralID: GattDatabase])
        /// The GATT objects of a known peripheral's linked device with
        /// resolved services moved, or its services resolved.
        case gattObjectsMoved(PeripheralID)
        /// The settle time of `generation` ended for the peripheral.
        case gattSettled(PeripheralID, generation: UInt64)
        /// The peripheral's GATT database as read from bluetoothd's objects
        /// for ``Effect/readGattDatabase(_:)``.
        case gattDatabaseRead(PeripheralID, GattDatabase)
    }

    /// What the daemon carries out for an input, in order.
    public enum Effect: Sendable {
        /// Carry out a machine's actions (BlueZ calls, timers, events, store writes).
        case machineActions(ConnectionIntentID, [Machine.Action])
        /// Feed this machine input once the current input's actions are done
        /// (the daemon's queue of immediate inputs).
        case machineInputAfter(ConnectionIntentID, Machine.Input)
        /// Tell programs of the adapter's new status: the journal,
        /// `Manager1`'s properties, and an `adapter-state` event to each of
        /// `identifiers`, stored with the status in one commit.
        case announceAdapter(AdapterWatch.Announcement, identifiers: [RestoreIdentifier])
        /// The adapter is as last announced: a journal line, nothing to tell.
        case adapterAsAnnounced(AdapterStatus)
        /// Feed each of these machines the input, in this order, each one's
        /// actions carried out before the next is fed.
        case feedEach([ConnectionIntentID], Machine.Input)
        /// bluetoothd is gone: the journal, and `Manager1.Ready` false.
        case bluetoothdLost
        /// bluetoothd is back: the journal, and `Manager1.Ready` true.
        case bluetoothdBack(BluetoothdReturn)
        /// The adapter's power changed: the journal.
        case adapterPowerReported(Bool)
        /// End every notify session relinkd holds (none survives the link).
        case endNotifySessions
        /// End the notify sessions held on this peripheral's link.
        case endNotifySessionsOf(PeripheralID)
        /// A scan of `identifier` met the advertisement: the peripheral
        /// known (or stored) at its address, and a `discovered` event.
        case discovered(Advertisement, by: RestoreIdentifier)
        /// The device's address changed on the same object: follow the
        /// peripheral to its identity (the changed device's effects need
        /// the device: the daemon carries them out where it has it).
        case followAddressChange
        /// The peripheral was seen (connected, or an RSSI): its `LastSeen`.
        case peripheralSeen(PeripheralID)
        /// Its pairing, bond or trust changed: its API object's properties.
        case peripheralChanged(PeripheralID)
        /// bluetoothd paired it (not relinkd): trusted, and said so.
        case pairedByBluetoothd(PeripheralID)
        /// Its link changed: the write streams on it.
        case writeStreamsLinkChanged(PeripheralID)
        /// Its link changed: the transfers on it.
        case transfersLinkChanged(PeripheralID)
        /// bluetoothd's reason for the link's end was used: forget it.
        case linkEndCauseUsed
        /// Check after a grace period whether a link whose services went
        /// unresolved is still up that way (half-open).
        case checkHalfOpenLater(BluetoothAddress)
        /// A half-open link at the address is taken for lost: journal it.
        case halfOpenLinkLost(BluetoothAddress)
        /// Disconnect the device at the address, so that BlueZ tears the
        /// half-open link down and the next Connect makes a real one (a
        /// Connect on a connected device changes nothing).
        case disconnectHalfOpen(BluetoothAddress)
        /// The peripheral has no device object any more: its API object says so.
        case deviceObjectGone(PeripheralID)
        /// The device's GATT objects may have moved: a database read waits for them to settle.
        case gattObjectsMoved
        /// Read again the GATT database of every link whose services are resolved.
        case readResolvedDatabases
        /// Register every identifier's services and advertisement with bluetoothd.
        case hostAll(reason: String)
        /// After power-on: register again what bluetoothd no longer has.
        case hostAfterPowerOn
        /// Carry out the subscription planner's commands on the link (StartNotify, StopNotify).
        case subscriptionCommands([SubscriptionPlanner.Command])
        /// Tell each change's identifiers with a `notification-state` event
        /// (gathered into the next commit), and journal it.
        case notificationStates([NotificationChange])
        /// Tell each identifier its `connection-event`s and store the
        /// registrations whose told links changed, gathered into the next commit.
        case connectionEvents(ConnectionEventWatch.Told)
        /// Sleep ``GattGrace/period``, then hand back ``Input/gattGraceEnded(_:generation:)``.
        case gattGraceTimer(PeripheralID, generation: UInt64)
        /// Journal: a subscribed characteristic is not on the link yet (said once until it is armed).
        case characteristicNotYetOnLink(PeripheralID, CharacteristicKey)
        /// Journal: an armed characteristic left the link; armed again when it is back.
        case characteristicLeftLink(PeripheralID, CharacteristicKey)
        /// Read what the peripheral's link shows of its GATT database and
        /// hand it back as ``Input/gattLooked(_:_:)``.
        case lookAtGatt(PeripheralID)
        /// Remove these subscriptions and tell each identifier with a
        /// `subscription-failed` event, in one commit; then carry out each one's `stop`.
        case failSubscriptions([FailedSubscription])
        /// Register background auto-connect for the services now wanted.
        case applyAutoConnect
        /// The users who may see the peripheral changed (its intents or subscriptions did).
        case refreshViewers(PeripheralID)
        /// Reconnect the link so that bluetoothd discovers services afresh
        /// (`Disconnect`; the machines connect again), journalled with the attempt.
        case rediscoverServices(PeripheralID, attempt: Int, missing: [CharacteristicKey])
        /// Journal: the reconnections in a row are spent; the next one comes after this long.
        case rediscoverLater(PeripheralID, after: Duration, missing: [CharacteristicKey])
        /// Journal: characteristics are missing on a link that is down; waiting for them.
        case waitForGatt(PeripheralID, missing: [CharacteristicKey])
        /// Store whether the peripheral is bonded with each of its intents (those that changed).
        case noteBond(PeripheralID, bonded: Bool)
        /// A bond removed outside relinkd: the journal, and a `bond-removed` event to each of `identifiers`.
        case bondRemoved(PeripheralID, identifiers: [RestoreIdentifier])
        /// Ask the bus (or the systemd manager) to start the program of
        /// `spec` for `reason`; the start is stored first, counted in the
        /// start limit across restarts; the answer comes back as ``Input/launchAnswered(_:_:now:)``.
        case startProgram(LaunchReason, spec: LaunchSpec)
        /// Journal: the bus answered a start (started, or it already runs).
        case programAnswered(String, LaunchStartOutcome)
        /// Hand back ``Input/launchTimerFired(_:now:)`` for the bus name at this instant.
        case relaunchTimer(String, at: C.Instant)
        /// Journal: a start failed; the next one is tried at `retryAt` while events wait.
        case relaunchFailed(String, why: String, retryAt: C.Instant?, waiting: [RestoreIdentifier])
        /// Journal: the start limit is reached; nothing is started before `until`.
        case relaunchLimitReached(String, starts: Int, until: C.Instant, waiting: [RestoreIdentifier])
        /// Journal: an identifier's launch spec was set or removed.
        case launchSpecChanged(RestoreIdentifier, LaunchSpec?)
        /// Sleep the settle time, then hand back ``Input/gattSettled(_:generation:)``.
        case gattSettleTimer(PeripheralID, generation: UInt64)
        /// Read the peripheral's GATT database (when its link is up with
        /// services resolved) and hand it back as ``Input/gattDatabaseRead(_:_:)``.
        case readGattDatabase(PeripheralID)
        /// Store the database read (gathered into the next commit).
        case storeGattDatabase(PeripheralID, GattDatabase)
        /// Store the database and a `services-changed` event to each of `identifiers`, in one commit.
        case servicesChanged(PeripheralID, GattDatabase, identifiers: [RestoreIdentifier])
    }

    /// Decides what `input` means: the core's state changes and the effects
    /// to carry out, in order.
    public mutating func handle(_ input: Input) -> [Effect] {
        switch input {
        case .machine(let intent, let machineInput): feed(intent, machineInput)
        case .linkCarried(let peripheral): linkCarried(peripheral)
        case .adapterFound(let status, let stored): adapterFound(status, lastAnnounced: stored)
        case .adapterReported(let status): adapterReported(status)
        case .bluetoothdLost: bluetoothdLost()
        case .bluetoothdBack(let why, let adapterOn): bluetoothdBack(why, adapterOn: adapterOn)
        case .adapterPowered(let on): adapterPowered(on)
        case .peripheral(let peripheral, let machineInput): [.feedEach(intents(of: peripheral), machineInput)]
        case .linkLost(let peripheral, let address, let why, let cause): linkLost(peripheral, address, why: why, cause: cause)
        case .advertised(let advertisement): advertised(advertisement)
        case .deviceChanged(let change): deviceChanged(change)
        case .characteristicMissing(let peripheral, let key): characteristicMissing(peripheral, key)
        case .characteristicLeft(let peripheral, let key): characteristicLeft(peripheral, key)
        case .characteristicsAppeared(let peripheral): characteristicsAppeared(peripheral)
        case .notifyArmed(let peripheral, let key): notifyArmed(peripheral, key)
        case .notifyFailed(let peripheral, let key, let failure): notifyFailed(peripheral, key, failure)
        case .subscribed(let subscription): subscribed(subscription)
        case .unsubscribed(let subscription): unsubscribed(subscription)
        case .gattGraceEnded(let peripheral, let generation): gattGraceEnded(peripheral, generation: generation)
        case .gattLooked(let peripheral, let link): gattLooked(peripheral, link)
        case .bondObserved(let peripheral, let isBonded): bondObserved(peripheral, bonded: isBonded)
        case .bondsAtStart(let found): bondsAtStart(found)
        case .halfOpenLooked(let peripheral, let address, let still): halfOpenLooked(peripheral, address, stillHalfOpen: still)
        case .deviceObjectRemoved(let peripheral, let address): deviceObjectRemoved(peripheral, address)
        case .bondForgotten(let peripheral): bondForgotten(peripheral)
        case .relaunchOpened(let specs, let starts, let attached, let now):
            relaunchOpened(specs: specs, startsBefore: starts, attached: attached, now: now)
        case .eventsCommitted(let events, let now): eventsCommitted(events, now: now)
        case .launchAnswered(let name, let outcome, let now): launchAnswered(name, outcome, now: now)
        case .launchTimerFired(let name, let now): launchTimerFired(name, now: now)
        case .launchSpecStored(let id, let spec): launchSpecStored(id, spec)
        case .launchForgotten(let id): launchForgotten(id)
        case .peerLinkChanged(let link, let cause): peerLinkChanged(link, cause: cause)
        case .peersNow(let links, let atStart): peersNow(links, atStart: atStart)
        case .connectionEventsStored(let id, let registration, let connectedNow):
            connectionEventsStored(id, registration, connectedNow: connectedNow)
        case .gattDatabasesLoaded(let stored): gattDatabasesLoaded(stored)
        case .gattObjectsMoved(let peripheral): gattObjectsMoved(peripheral)
        case .gattSettled(let peripheral, let generation): gattSettled(peripheral, generation: generation)
        case .gattDatabaseRead(let peripheral, let database): gattDatabaseRead(peripheral, database)
        }
    }
}
