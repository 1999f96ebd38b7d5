import DaemonCore
import RelinkModel
import Restoration
import Testing

/// When relinkd starts a program (DaemonCore+Relaunch.swift), as tables on a
/// clock moved by hand.
@Suite struct RelaunchCoreTests {
    typealias Core = DaemonCore<ManualClock>

    static func names(_ effects: [Core.Effect]) -> [String] { DaemonCoreTests.names(effects) }

    /// A core with `ids` registered, starting programs.
    static func core(_ ids: [String]) throws -> Core {
        var core = Core()
        for id in ids { core.identifiers.insert(try DaemonCoreTests.identifier(id)) }
        core.relaunch.enabled = true
        return core
    }

    static func event(_ id: String, _ kind: String, attached: Bool = false) throws -> Core.CommittedEvent {
        Core.CommittedEvent(identifier: try DaemonCoreTests.identifier(id), kind: kind, attached: attached)
    }

    /// Events before relinkd owns its name wait and are weighed when it
    /// does; a spec of an identifier not registered is not loaded; an
    /// attached client, a kind the spec does not wake on, or no spec start
    /// nothing; one start gathers every identifier waiting for the bus name.
    @Test func eventsWaitForTheNameThenStartTheProgramOnce() throws {
        var core = try Self.core(["a.lock", "b.lock", "c.band"])
        let now = ManualClock().now
        #expect(Self.names(core.handle(.eventsCommitted([try Self.event("b.lock", "value"), try Self.event("a.lock", "disconnected")], now: now))) == [])
        let a = try DaemonCoreTests.identifier("a.lock"), b = try DaemonCoreTests.identifier("b.lock")
        let band = try DaemonCoreTests.identifier("c.band"), gone = try DaemonCoreTests.identifier("gone")
        let specs = [a: LaunchSpec(busName: "org.example.Lock", systemdUnit: "lock.service"),
                     b: LaunchSpec(busName: "org.example.Lock", wakeOn: ["value"]),
                     band: LaunchSpec(busName: "org.example.Band", wakeOn: ["disconnected"]),
                     gone: LaunchSpec(busName: "org.example.Gone")]
        let opened = Self.names(core.handle(.relaunchOpened(specs: specs, startsBefore: [:], attached: [], now: now)))
        #expect(opened == [#"start org.example.Lock for ["a.lock"] ["disconnected"] unit lock.service"#], "b.lock's event joins the start under way")
        #expect(core.relaunch.waiting(for: "org.example.Lock") == [a, b])
        #expect(core.relaunch.specs[gone] == nil, "not registered: not loaded")
        let table: [(Core.Input, [String])] = [
            (.eventsCommitted([try Self.event("a.lock", "value")], now: now), []),  // a start is under way
            (.eventsCommitted([try Self.event("c.band", "value")], now: now), []),  // not a kind it wakes on
            (.eventsCommitted([try Self.event("c.band", "disconnected", attached: true)], now: now), []),
            (.eventsCommitted([try Self.event("c.band", "disconnected")], now: now), [#"start org.example.Band for ["c.band"] ["disconnected"] unit -"#]),
        ]
        for (input, expected) in table { #expect(Self.names(core.handle(input)) == expected, "\(input)") }
        var off = try Self.core(["a.lock"])
        off.relaunch.enabled = false
        #expect(Self.names(off.handle(.eventsCommitted([try Self.event("a.lock", "value")], now: now))) == [])
        #expect(off.relaunch.held.isEmpty, "a relinkd that starts no program holds nothing")
    }

    /// A start that fails backs off and is tried again by its timer; a
    /// program that registers gets the launch reason once; the start limit
    /// is said once.
    @Test func aFailedStartIsRetriedAndTheLimitIsSaidOnce() throws {
        let clock = ManualClock()
        var core = try Self.core(["a.lock"])
        let a = try DaemonCoreTests.identifier("a.lock")
        _ = core.handle(.relaunchOpened(specs: [a: LaunchSpec(busName: "org.example.Lock")], startsBefore: [:], attached: [], now: clock.now))
        #expect(Self.names(core.handle(.eventsCommitted([try Self.event("a.lock", "value")], now: clock.now))).count == 1)
        #expect(Self.names(core.handle(.launchAnswered("org.example.Lock", .failed("no such unit"), now: clock.now)))
                == ["answered org.example.Lock failed(\"no such unit\")", "failed org.example.Lock: no such unit waiting [\"a.lock\"]", "timer org.example.Lock"])
        #expect(Self.names(core.handle(.launchTimerFired("org.example.Lock", now: clock.now))) == [], "too early")
        clock.advance(by: .seconds(1))
        #expect(Self.names(core.handle(.launchTimerFired("org.example.Lock", now: clock.now))) == [#"start org.example.Lock for ["a.lock"] ["value"] unit -"#])
        #expect(Self.names(core.handle(.launchAnswered("org.example.Lock", .started, now: clock.now))) == ["answered org.example.Lock started", "timer org.example.Lock"])
        #expect(core.launchReason(registering: a, now: clock.now)?.busName == "org.example.Lock")
        #expect(core.launchReason(registering: a, now: clock.now) == nil, "once")

        var limited = try Self.core(["a.lock"])
        let burst = RelaunchLimits.standard.burst
        let starts = (0..<burst).map { _ in clock.now }
        _ = limited.handle(.relaunchOpened(specs: [a: LaunchSpec(busName: "org.example.Lock")], startsBefore: ["org.example.Lock": starts],
                                           attached: [], now: clock.now))
        let limit = Self.names(limited.handle(.eventsCommitted([try Self.event("a.lock", "value")], now: clock.now)))
        #expect(limit == ["limit org.example.Lock \(burst) waiting [\"a.lock\"]"], "starts before the restart count")
        #expect(Self.names(limited.handle(.eventsCommitted([try Self.event("a.lock", "value")], now: clock.now))) == [], "said once")
    }

    /// A spec set is journalled once; removing it forgets the events that
    /// waited for its program; an identifier that goes takes its held events.
    @Test func specsAndIdentifiersThatGo() throws {
        var core = try Self.core(["a.lock"])
        let a = try DaemonCoreTests.identifier("a.lock"), spec = LaunchSpec(busName: "org.example.Lock")
        let now = ManualClock().now
        _ = core.handle(.eventsCommitted([try Self.event("a.lock", "value")], now: now))
        #expect(Self.names(core.handle(.launchForgotten(a))) == [])
        #expect(core.relaunch.held.isEmpty)
        _ = core.handle(.relaunchOpened(specs: [:], startsBefore: [:], attached: [], now: now))
        #expect(Self.names(core.handle(.launchSpecStored(a, spec))) == ["spec a.lock org.example.Lock"])
        #expect(Self.names(core.handle(.launchSpecStored(a, spec))) == [], "unchanged")
        _ = core.handle(.eventsCommitted([try Self.event("a.lock", "value")], now: now))
        #expect(core.relaunch.waiting(for: "org.example.Lock") == [a])
        #expect(Self.names(core.handle(.launchSpecStored(a, nil))) == ["spec a.lock removed"])
        #expect(core.relaunch.waiting(for: "org.example.Lock").isEmpty)
    }
}
