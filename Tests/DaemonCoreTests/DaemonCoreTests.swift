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
            case .feedEach(let intents, let input): "feed \(intents.map(\.identifier.rawValue)) \(input)"
            case .bluetoothdLost: "bluetoothd lost"
            case .bluetoothdBack(let why): "bluetoothd back \(why.rawValue)"
            case .adapterPowerReported(let on): "powered \(on)"
            case .endNotifySessions: "end notify sessions"
            case .readResolvedDatabases: "read databases"
            case .hostAll(let reason): "host all: \(reason)"
            case .hostAfterPowerOn: "host after power-on"
            }
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
}
