import DaemonCore
import RelinkModel
import Restoration
import Testing

/// The daemon core's decisions as tables: inputs in, effects out, no bus,
/// no BlueZ, no SQLite (docs/architecture.md, "The daemon core").
@Suite struct DaemonCoreTests {
    typealias Core = DaemonCore<ManualClock>

    static func identifier(_ text: String) throws -> RestoreIdentifier { try RestoreIdentifier(text) }

    static let lock = PeripheralID()
    static let band = PeripheralID()
    static func lockAddress() throws -> BluetoothAddress { try BluetoothAddress(parsing: "C0:11:22:33:44:55") }

    /// A core with `intents`' machines, none started.
    static func core(_ intents: [ConnectionIntentID]) throws -> Core {
        var core = Core()
        let options = try ConnectionOptions(services: [try BluetoothUUID(parsing: "fff0")])
        for intent in intents {
            core.identifiers.insert(intent.identifier)
            core.machines[intent] = Core.Machine(intent: intent, options: options, knownAddress: try lockAddress(), clock: ManualClock())
        }
        return core
    }

    /// What an input asks of the daemon, as text a table can compare.
    static func names(_ effects: [Core.Effect]) -> [String] {
        effects.map { effect in
            switch effect {
            case .machineActions(let intent, _): "actions \(intent.identifier)"
            case .machineInputAfter(let intent, let input): "after \(intent.identifier) \(input)"
            case .announceAdapter(let announcement, let identifiers):
                "announce \(announcement.status.state.rawValue) after \(announcement.previous?.state.rawValue ?? "none") to \(identifiers.map(\.rawValue))"
            case .adapterAsAnnounced(let status): "as announced \(status.state.rawValue)"
            // The failure of a disconnection is checked on its own (aLostLink...).
            case .feedEach(let intents, .disconnected(let address, _, _)): "feed \(intents.map(\.identifier.rawValue)) disconnected(\(address))"
            case .feedEach(let intents, let input): "feed \(intents.map(\.identifier.rawValue)) \(input)"
            case .bluetoothdLost: "bluetoothd lost"
            case .bluetoothdBack(let why): "bluetoothd back \(why.rawValue)"
            case .adapterPowerReported(let on): "powered \(on)"
            case .endNotifySessions: "end notify sessions"
            case .endNotifySessionsOf(let peripheral): "end notify sessions of \(peripheral == lock ? "lock" : "other")"
            case .discovered(let advertisement, let id): "discovered \(advertisement.address.string) by \(id)"
            case .followAddressChange: "follow address"
            case .peripheralSeen: "seen"
            case .peripheralChanged: "properties"
            case .pairedByBluetoothd: "paired by bluetoothd"
            case .writeStreamsLinkChanged: "write streams"
            case .transfersLinkChanged: "transfers"
            case .linkEndCauseUsed: "cause used"
            case .checkHalfOpenLater: "half-open check"
            case .halfOpenLinkLost(let address): "half-open lost \(address)"
            case .disconnectHalfOpen(let address): "disconnect \(address)"
            case .deviceObjectGone(let peripheral): "object gone \(peripheral == lock ? "lock" : "other")"
            case .gattObjectsMoved: "gatt moved"
            case .readResolvedDatabases: "read databases"
            case .hostAll(let reason): "host all: \(reason)"
            case .hostAfterPowerOn: "host after power-on"
            case .subscriptionCommands(let commands): "commands \(commands.map(command))"
            case .notificationStates(let changes):
                "tell " + changes.map {
                    "\($0.characteristic.characteristic) \($0.notifying ? "notifying" : "stopped \($0.reason?.errorName ?? "asked")")"
                        + " to \($0.identifiers.map(\.rawValue).joined(separator: ","))"
                }.joined(separator: "; ")
            case .connectionEvents(let told): "connection events " + ConnectionEventCoreTests.text(told)
            case .gattGraceTimer(_, let generation): "grace timer \(generation)"
            case .characteristicNotYetOnLink(_, let key): "not yet on link \(key.characteristic)"
            case .characteristicLeftLink(_, let key): "left link \(key.characteristic)"
            case .lookAtGatt: "look"
            case .failSubscriptions(let failed):
                "fail \(failed.map { "\($0.subscription.identifier) \($0.subscription.characteristic.characteristic) \($0.reason.errorName)" })"
            case .applyAutoConnect: "auto-connect"
            case .refreshViewers: "viewers"
            case .rediscoverServices(_, let attempt, let missing): "rediscover \(attempt) \(missing.map(\.characteristic))"
            case .rediscoverLater(_, let after, let missing): "rediscover after \(after) \(missing.map(\.characteristic))"
            case .waitForGatt(_, let missing): "wait \(missing.map(\.characteristic))"
            case .noteBond(let peripheral, let bonded): "note \(peripheral == lock ? "lock" : "other") bonded \(bonded)"
            case .bondRemoved(let peripheral, let identifiers): "bond removed \(peripheral == lock ? "lock" : "other") to \(identifiers.map(\.rawValue))"
            case .startProgram(let reason, let spec):
                "start \(reason.busName) for \(reason.identifiers.map(\.rawValue).sorted()) \(reason.events.sorted()) unit \(spec.systemdUnit ?? "-")"
            case .programAnswered(let name, let outcome): "answered \(name) \(outcome)"
            case .relaunchTimer(let name, _): "timer \(name)"
            case .relaunchFailed(let name, let why, _, let waiting): "failed \(name): \(why) waiting \(waiting.map(\.rawValue))"
            case .relaunchLimitReached(let name, let starts, _, let waiting): "limit \(name) \(starts) waiting \(waiting.map(\.rawValue))"
            case .launchSpecChanged(let id, let spec): "spec \(id) \(spec?.busName ?? "removed")"
            case .gattSettleTimer(_, let generation): "settle \(generation)"
            case .readGattDatabase: "read database"
            case .storeGattDatabase(_, let database): "store \(database.services.count) services"
            case .servicesChanged(_, let database, let identifiers): "services changed \(database.services.count) to \(identifiers.map(\.rawValue))"
            }
        }
    }

    /// A planner command as text.
    static func command(_ command: SubscriptionPlanner.Command) -> String {
        switch command {
        case .startNotify(_, let key): "start \(key.characteristic)"
        case .stopNotify(_, let key): "stop \(key.characteristic)"
        }
    }

    /// A link that carried data is told once per link to every intent on
    /// its peripheral, in intent order; a new link (services resolved) is told again.
    @Test func aLinkThatCarriedDataIsToldOncePerLinkToEachIntentOnItsPeripheral() throws {
        let lockA = ConnectionIntentID(identifier: try Self.identifier("a.lock"), peripheral: Self.lock)
        let lockB = ConnectionIntentID(identifier: try Self.identifier("b.lock"), peripheral: Self.lock)
        let band = ConnectionIntentID(identifier: try Self.identifier("a.band"), peripheral: Self.band)
        var core = try Self.core([lockB, band, lockA])
        let table: [(Core.Input, [String])] = [
            (.linkCarried(Self.lock), ["after a.lock linkCarried", "after b.lock linkCarried"]),
            (.linkCarried(Self.lock), []),
            (.linkCarried(Self.band), ["after a.band linkCarried"]),
            (.machine(lockA, .servicesResolved(try Self.lockAddress())), ["actions a.lock"]),
            (.linkCarried(Self.lock), ["after a.lock linkCarried", "after b.lock linkCarried"]),
            (.linkCarried(PeripheralID()), []),
        ]
        for (input, expected) in table { #expect(Self.names(core.handle(input)) == expected, "\(input)") }
    }

    /// A machine's input reaches its machine (its state changes with it);
    /// an intent that is gone yields nothing.
    @Test func aMachineInputReachesItsMachineAndNothingComesForAGoneIntent() throws {
        let intent = ConnectionIntentID(identifier: try Self.identifier("a.lock"), peripheral: Self.lock)
        var core = try Self.core([intent])
        let effects = core.handle(.machine(intent, .start(restoringConnected: false)))
        guard case .machineActions(let who, let actions)? = effects.first, effects.count == 1 else {
            Issue.record("\(effects)")
            return
        }
        #expect(who == intent && !actions.isEmpty)
        #expect(core.machines[intent]?.state != .idle, "the machine kept its new state")
        let gone = ConnectionIntentID(identifier: try Self.identifier("gone"), peripheral: Self.lock)
        #expect(Self.names(core.handle(.machine(gone, .start(restoringConnected: false)))) == [])
    }

    /// The adapter's status: at start-up only when it differs from the one
    /// last announced, then each change, to every identifier (sorted).
    @Test func theAdapterIsAnnouncedAtStartOnlyWhenChangedThenAtEachChange() throws {
        var core = try Self.core([ConnectionIntentID(identifier: try Self.identifier("b.lock"), peripheral: Self.lock),
                                  ConnectionIntentID(identifier: try Self.identifier("a.band"), peripheral: Self.band)])
        let on = AdapterStatus(.poweredOn, roles: [.central]), off = AdapterStatus(.poweredOff, roles: [.central])
        #expect(Self.names(core.handle(.adapterFound(on, lastAnnounced: on))) == ["as announced poweredOn"])
        let table: [(Core.Input, [String])] = [
            (.adapterReported(on), []),
            (.adapterReported(off), ["announce poweredOff after poweredOn to [\"a.band\", \"b.lock\"]"]),
            (.adapterReported(off), []),
            (.adapterReported(AdapterStatus(.missing)), ["announce missing after poweredOff to [\"a.band\", \"b.lock\"]"]),
        ]
        for (input, expected) in table { #expect(Self.names(core.handle(input)) == expected, "\(input)") }
        var fresh = Core()
        #expect(Self.names(fresh.handle(.adapterFound(off, lastAnnounced: nil))) == ["announce poweredOff after none to []"])
        #expect(fresh.adapter.current == off)
    }

    /// bluetoothd gone or back, the adapter's power: every machine hears
    /// it in intent order, each fed in turn (one effect, carried out
    /// machine by machine); notify sessions end with links; the adapter
    /// seen powered after a restart is told; the peripheral role is hosted again.
    @Test func bluetoothdAndThePowerReachEveryMachineInOrder() throws {
        var core = try Self.core([ConnectionIntentID(identifier: try Self.identifier("b.lock"), peripheral: Self.lock),
                                  ConnectionIntentID(identifier: try Self.identifier("a.band"), peripheral: Self.band)])
        let all = #"["a.band", "b.lock"]"#
        let table: [(Core.Input, [String])] = [
            (.bluetoothdLost, ["bluetoothd lost", "end notify sessions", "feed \(all) bluetoothdRestarted"]),
            (.bluetoothdBack(.restarted, adapterOn: true), ["bluetoothd back restarted", "end notify sessions", "feed \(all) bluetoothdRestarted",
                                                            "feed \(all) adapterPowered(true)", "read databases", "host all: bluetoothd restarted"]),
            (.bluetoothdBack(.answered, adapterOn: false), ["bluetoothd back answered", "end notify sessions", "feed \(all) bluetoothdRestarted",
                                                            "read databases", "host all: bluetoothd restarted"]),
            (.adapterPowered(false), ["powered false", "end notify sessions", "feed \(all) adapterPowered(false)"]),
            (.adapterPowered(true), ["powered true", "feed \(all) adapterPowered(true)", "host after power-on"]),
        ]
        for (input, expected) in table { #expect(Self.names(core.handle(input)) == expected, "\(input)") }
        var empty = Core()
        #expect(Self.names(empty.handle(.bluetoothdLost)) == ["bluetoothd lost", "end notify sessions", "feed [] bluetoothdRestarted"])
    }

    /// A lost link: the failure is LinkLost with bluetoothd's cause, every
    /// intent on the peripheral hears it in order; no intent, or no known
    /// peripheral at the address, nothing to feed.
    @Test func aLostLinkEndsItsSessionsAndTellsEachIntentOnThePeripheral() throws {
        let lockA = ConnectionIntentID(identifier: try Self.identifier("a.lock"), peripheral: Self.lock)
        let lockB = ConnectionIntentID(identifier: try Self.identifier("b.lock"), peripheral: Self.lock)
        var core = try Self.core([lockB, lockA, ConnectionIntentID(identifier: try Self.identifier("a.band"), peripheral: Self.band)])
        let address = try Self.lockAddress()
        let effects = core.handle(.linkLost(Self.lock, address, why: "the link went down", cause: .timeout))
        #expect(Self.names(effects).first == "end notify sessions of lock" && effects.count == 2, "\(effects)")
        guard case .feedEach(let intents, .disconnected(let at, let reason?, let cause))? = effects.last else {
            Issue.record("\(effects)")
            return
        }
        #expect(intents == [lockA, lockB] && at == address && cause == .timeout)
        #expect(reason.errorName == RelinkErrorName.linkLost.rawValue && reason.failureClass == .transient)
        #expect(reason.message == "the link went down (bluetoothd: \(LinkEndCause.timeout.rawValue))")
        #expect(Self.names(core.handle(.linkLost(nil, address, why: "gone", cause: nil))) == [])
        #expect(Self.names(core.handle(.peripheral(Self.lock, .deviceConnected(address)))) == ["feed [\"a.lock\", \"b.lock\"] deviceConnected(\(address))"])
        #expect(Self.names(core.handle(.peripheral(PeripheralID(), .deviceConnected(address)))) == ["feed [] deviceConnected(\(address))"])
    }

    /// An advertisement reaches each scan that wants it, once per address
    /// and payload without duplicates: a connection's search is fed it, an
    /// identifier's scan is told of a discovery.
    @Test func anAdvertisementGoesToEachScanThatWantsItOnce() throws {
        let lockA = ConnectionIntentID(identifier: try Self.identifier("a.lock"), peripheral: Self.lock)
        var core = try Self.core([lockA])
        let service = try BluetoothUUID(parsing: "fff0")
        let scanner = try Self.identifier("scanner")
        _ = core.scans.register(ScanIntent(services: [service]), for: .identifier(scanner))
        _ = core.scans.register(ScanIntent(services: [service]), for: .connection(lockA))
        let advertisement = Advertisement(address: try Self.lockAddress(), serviceUUIDs: [service])
        let first = Self.names(core.handle(.advertised(advertisement)))
        #expect(first.count == 2 && first.contains("discovered \(advertisement.address.string) by scanner")
                && first.contains { $0.hasPrefix("feed [\"a.lock\"] advertisement(") }, "\(first)")
        #expect(Self.names(core.handle(.advertised(advertisement))) == [], "the same payload again is no news")
        let other = Advertisement(address: try BluetoothAddress(parsing: "C0:11:22:33:44:66"), serviceUUIDs: [try BluetoothUUID(parsing: "180d")])
        #expect(Self.names(core.handle(.advertised(other))) == [], "no scan wants it")
    }

    /// What each device property change means, subsystem by subsystem, in
    /// the order carried out: the table relinkd's BlueZ handler follows.
    @Test func eachDevicePropertyChangeReachesTheSubsystemsThatCare() throws {
        let lockA = ConnectionIntentID(identifier: try Self.identifier("a.lock"), peripheral: Self.lock)
        var core = try Self.core([lockA])
        let address = try Self.lockAddress()
        typealias Change = Core.DeviceChange
        func change(_ property: Core.DeviceProperty, _ value: Bool?, connected: Bool = true, known: Bool = true) -> Core.Input {
            .deviceChanged(Change(peripheral: known ? Self.lock : nil, address: address, property: property, newValue: value,
                                  connected: connected, linkEndCause: .remote))
        }
        let feedA = "feed [\"a.lock\"]"
        let table: [(Core.Input, [String])] = [
            (change(.connected, true), ["seen", "write streams", "transfers", "\(feedA) deviceConnected(\(address))"]),
            (change(.servicesResolved, true), ["write streams", "transfers", "\(feedA) servicesResolved(\(address))", "gatt moved"]),
            (change(.servicesResolved, false), ["write streams", "transfers", "half-open check"]),
            (change(.servicesResolved, false, connected: false), ["write streams", "transfers"]),
            (change(.connected, false, connected: false), ["seen", "write streams", "transfers", "cause used", "end notify sessions of lock",
                                                           "\(feedA) disconnected(\(address))"]),
            (change(.rssi, nil), ["seen"]),
            (change(.paired, true), ["properties", "note lock bonded true", "paired by bluetoothd"]),
            (change(.paired, false), ["properties", "note lock bonded false", #"bond removed lock to ["a.lock"]"#]),
            (change(.bonded, true), ["properties", "note lock bonded true"]),
            (change(.trusted, true), ["properties"]),
            (change(.address, nil), ["follow address"]),
            (change(.address, nil, known: false), ["follow address"]),
            (change(.connected, true, known: false), []),
            (change(.servicesResolved, true, known: false), ["gatt moved"]),
            (change(.servicesResolved, false, known: false), ["half-open check"]),
            (change(.connected, false, connected: false, known: false), ["cause used"]),
        ]
        for (input, expected) in table { #expect(Self.names(core.handle(input)) == expected, "\(input)") }
    }

    /// A half-open link after its grace: still half-open, it is lost like
    /// any link (journalled, the intents told, notify sessions ended) and
    /// its device disconnected, also at an address no known peripheral is
    /// at; gone or resolved meanwhile, nothing. A removed device object.
    @Test func aLinkStillHalfOpenAfterItsGraceOrWithoutItsObjectIsLost() throws {
        var core = try Self.core([ConnectionIntentID(identifier: try Self.identifier("a.lock"), peripheral: Self.lock)])
        let address = try Self.lockAddress()
        let table: [(Core.Input, [String])] = [
            (.halfOpenLooked(Self.lock, address, stillHalfOpen: false), []),
            (.halfOpenLooked(Self.lock, address, stillHalfOpen: true),
             ["half-open lost \(address)", "end notify sessions of lock", "feed [\"a.lock\"] disconnected(\(address))", "disconnect \(address)"]),
            (.halfOpenLooked(nil, address, stillHalfOpen: true), ["half-open lost \(address)", "disconnect \(address)"]),
            // The device object removed: the API object says so, the link (if any) is lost; no bond news.
            (.deviceObjectRemoved(Self.lock, address),
             ["object gone lock", "end notify sessions of lock", "feed [\"a.lock\"] disconnected(\(address))"]),
        ]
        for (input, expected) in table { #expect(Self.names(core.handle(input)) == expected, "\(input)") }
    }
}
