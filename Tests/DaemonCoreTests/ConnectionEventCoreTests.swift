import DaemonCore
import RelinkModel
import Restoration
import Testing

/// Who hears of links made and lost at the system level (`connection-event`,
/// ``ConnectionEventWatch`` through the daemon core), and what is stored
/// with it: as tables, no bus, no BlueZ.
@Suite struct ConnectionEventCoreTests {
    typealias Core = DaemonCore<ManualClock>
    typealias Link = ConnectionEventWatch.PeerLink

    static let lock = DaemonCoreTests.lock, band = DaemonCoreTests.band
    static let lockService = BluetoothUUID(shortValue: 0xFFF0), heartRate = BluetoothUUID(shortValue: 0x180D)

    static func id(_ name: String) throws -> RestoreIdentifier { try DaemonCoreTests.identifier(name) }
    static func bandAddress() throws -> BluetoothAddress { try BluetoothAddress(parsing: "D0:11:22:33:44:66") }
    static func lockLink(_ connected: Bool) throws -> Link {
        Link(peripheral: lock, address: try DaemonCoreTests.lockAddress(), services: [lockService], connected: connected)
    }
    static func bandLink(_ connected: Bool, services: Set<BluetoothUUID> = [heartRate]) throws -> Link {
        Link(peripheral: band, address: try bandAddress(), services: services, connected: connected)
    }

    /// What a decision tells, as text: each event (`who +name` for
    /// peer-connected, `who -name reason` for peer-disconnected), then the
    /// registrations stored with their told links.
    static func text(_ told: ConnectionEventWatch.Told) -> String {
        func name(_ p: PeripheralID) -> String { p == lock ? "lock" : p == band ? "band" : "other" }
        let events = told.events.map { id, event -> String in
            guard case .connectionEvent(let p, let address, let connected, let reason) = event else { return "\(id) ?" }
            return "\(id) \(connected ? "+" : "-")\(name(p))" + (address == nil ? " (no address)" : "") + (reason.map { " \($0.errorName)" } ?? "")
        }
        let stored = told.registrations.keys.sorted().map { id in
            "store \(id) [\((told.registrations[id]?.told ?? []).map(name).sorted().joined(separator: ","))]"
        }
        return (events + stored).joined(separator: "; ")
    }

    static func told(_ effects: [Core.Effect]) -> [String] {
        effects.compactMap { if case .connectionEvents(let told) = $0 { text(told) } else { nil } }
    }

    /// A core where `a.app` matches the lock service and `b.app` names the band.
    static func registered() throws -> Core {
        var core = Core()
        _ = core.handle(.connectionEventsStored(try id("a.app"), ConnectionEventRegistration(services: [lockService]), connectedNow: []))
        _ = core.handle(.connectionEventsStored(try id("b.app"), ConnectionEventRegistration(peripherals: [band]), connectedNow: []))
        return core
    }

    /// A link up is told once to each registration it matches (by service
    /// or by peripheral), with the told link stored in the same decision; a
    /// link down is told, with bluetoothd's cause, only to those told it was
    /// up; a device that matches nobody tells nothing.
    @Test func linksUpAndDownAreToldToTheRegistrationsTheyMatch() throws {
        var core = try Self.registered()
        #expect(Self.told(core.handle(.peerLinkChanged(try Self.lockLink(true), cause: nil))) == ["a.app +lock; store a.app [lock]"])
        #expect(Self.told(core.handle(.peerLinkChanged(try Self.lockLink(true), cause: nil))) == [], "told once per link")
        #expect(Self.told(core.handle(.peerLinkChanged(try Self.bandLink(true, services: [Self.lockService]), cause: nil)))
                == ["a.app +band; b.app +band; store a.app [band,lock]; store b.app [band]"])
        let down = core.handle(.peerLinkChanged(try Self.lockLink(false), cause: .timeout))
        #expect(Self.told(down) == ["a.app -lock \(RelinkErrorName.linkLost.rawValue); store a.app [band]"])
        guard case .connectionEvents(let told)? = down.first, case .connectionEvent(_, _, _, let reason?) = told.events.first?.1 else {
            Issue.record("no reason: \(down)"); return
        }
        #expect(reason.message.contains(LinkEndCause.timeout.rawValue), "bluetoothd's cause is in the reason: \(reason.message)")
        #expect(Self.told(core.handle(.peerLinkChanged(try Self.lockLink(false), cause: nil))) == [], "not told up: nothing to tell")
        let other = Link(peripheral: PeripheralID(), address: try Self.bandAddress(), services: [Self.heartRate], connected: true)
        #expect(Self.told(core.handle(.peerLinkChanged(other, cause: nil))) == [])
    }

    /// A device whose services become known after the link came up
    /// (`UUIDs` after `Connected`) is told when it first matches.
    @Test func aLinkIsToldWhenItsServicesBecomeKnown() throws {
        var core = try Self.registered()
        var lock = try Self.lockLink(true)
        lock.services = []
        #expect(Self.told(core.handle(.peerLinkChanged(lock, cause: nil))) == [])
        #expect(!core.connectionEvents.wantsUnknown(offering: []))
        #expect(core.connectionEvents.wantsUnknown(offering: [Self.lockService]))
        #expect(!core.connectionEvents.wantsUnknown(offering: [Self.heartRate]), "b.app matches by peripheral only")
        lock.services = [Self.lockService]
        #expect(Self.told(core.handle(.peerLinkChanged(lock, cause: nil))) == ["a.app +lock; store a.app [lock]"])
    }

    /// bluetoothd leaving the bus tells every told link down, with
    /// `BluetoothdRestarted`; its return tells the links up again.
    @Test func bluetoothdGoneAndBackTellEveryLink() throws {
        var core = try Self.registered()
        _ = core.handle(.peerLinkChanged(try Self.lockLink(true), cause: nil))
        _ = core.handle(.peerLinkChanged(try Self.bandLink(true), cause: nil))
        let restarted = RelinkErrorName.bluetoothdRestarted.rawValue
        #expect(Self.told(core.handle(.bluetoothdLost)) == ["a.app -lock \(restarted); b.app -band \(restarted); store a.app []; store b.app []"])
        #expect(Self.told(core.handle(.bluetoothdLost)) == [], "told once")
        #expect(Self.told(core.handle(.peersNow([try Self.lockLink(true)], atStart: false))) == ["a.app +lock; store a.app [lock]"])
    }

    /// Start-up reconciles the stored told links with the links up now: one
    /// that ended while relinkd was stopped is told down (with the address
    /// stored for it; none for one never seen), one that came up is told
    /// up, one still up tells nothing.
    @Test func startUpTellsWhatChangedWhileRelinkdWasStopped() throws {
        var core = Core()
        core.connectionEvents.load([
            try Self.id("a.app"): ConnectionEventRegistration(services: [Self.lockService], told: [Self.lock]),
            try Self.id("b.app"): ConnectionEventRegistration(peripherals: [Self.band], told: [Self.band]),
        ], addresses: [Self.lock: try DaemonCoreTests.lockAddress()])
        let lost = RelinkErrorName.linkLost.rawValue
        let effects = core.handle(.peersNow([try Self.lockLink(false)], atStart: true))
        #expect(Self.told(effects) == ["a.app -lock \(lost); b.app -band (no address) \(lost); store a.app []; store b.app []"])
        guard case .connectionEvents(let told)? = effects.first, case .connectionEvent(_, let address, _, let reason?) = told.events.first?.1 else {
            Issue.record("\(effects)"); return
        }
        #expect(address == (try DaemonCoreTests.lockAddress()))
        #expect(reason.message.contains("not running"))
        #expect(Self.told(core.handle(.peersNow([try Self.lockLink(true), try Self.bandLink(true)], atStart: true)))
                == ["a.app +lock; b.app +band; store a.app [lock]; store b.app [band]"])
        #expect(Self.told(core.handle(.peersNow([try Self.bandLink(true)], atStart: false)))
                == ["a.app -lock \(RelinkErrorName.bluetoothdRestarted.rawValue); store a.app []"], "the band still up: nothing for b.app")
    }

    /// Registering tells at once the matching links up now (a replaced
    /// registration keeps what it was told and still matches, and tells only
    /// the new); a removed registration (or identifier) hears nothing more.
    @Test func registeringTellsTheLinksUpNowAndRemovingEndsIt() throws {
        var core = Core()
        let a = try Self.id("a.app")
        let up = [try Self.lockLink(true), try Self.bandLink(true)]
        let (first, told) = core.connectionEvents.registering(a, services: [Self.lockService], peripherals: [], connectedNow: up)
        #expect(Self.text(told) == "a.app +lock; store a.app [lock]")
        #expect(core.connectionEvents.registrations.isEmpty, "nothing changes until it is stored")
        _ = core.handle(.connectionEventsStored(a, first, connectedNow: up))
        let (second, more) = core.connectionEvents.registering(a, services: [Self.lockService], peripherals: [Self.band], connectedNow: up)
        #expect(Self.text(more) == "a.app +band; store a.app [band,lock]")
        _ = core.handle(.connectionEventsStored(a, second, connectedNow: up))
        let (third, fewer) = core.connectionEvents.registering(a, services: [], peripherals: [Self.band], connectedNow: up)
        #expect(Self.text(fewer) == "store a.app [band]", "the lock no longer matches: dropped, nothing told")
        #expect(second.told == [Self.lock, Self.band] && third.told == [Self.band])
        _ = core.handle(.connectionEventsStored(a, nil, connectedNow: []))
        #expect(Self.told(core.handle(.peerLinkChanged(try Self.lockLink(false), cause: nil))) == [])
        #expect(Self.told(core.handle(.bluetoothdLost)) == [])
    }
}
