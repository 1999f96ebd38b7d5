import DaemonCore
import RelinkModel
import Restoration
import Testing

/// The daemon core's decisions for a link that lacks a subscribed
/// characteristic (DaemonCore+Gatt.swift), as tables: no bus, no BlueZ, no SQLite.
@Suite struct GattCoreTests {
    typealias Core = DaemonCore<ManualClock>

    static let lock = DaemonCoreTests.lock
    static func key(_ characteristic: String) throws -> CharacteristicKey {
        CharacteristicKey(service: try BluetoothUUID(parsing: "fff0"), characteristic: try BluetoothUUID(parsing: characteristic))
    }

    /// A core whose lock is linked, with `identifiers` subscribed to
    /// fff0/fff1 on it, notifications not armed yet.
    static func linkedCore(_ identifiers: [String]) throws -> Core {
        var core = try DaemonCoreTests.core([ConnectionIntentID(identifier: try DaemonCoreTests.identifier("a.lock"), peripheral: lock)])
        for id in identifiers {
            _ = core.planner.subscribe(Subscription(identifier: try DaemonCoreTests.identifier(id), peripheral: lock, characteristic: try key("fff1")))
        }
        _ = core.planner.linkUp(lock)
        return core
    }

    /// A connected link: `services` maps a service UUID to its characteristics' UUIDs.
    static func link(resolved: Bool, connected: Bool = true, _ services: [String: [String]] = [:]) throws -> Core.LinkGatt {
        var characteristics: [BluetoothUUID: Set<BluetoothUUID>] = [:]
        for (service, uuids) in services {
            characteristics[try BluetoothUUID(parsing: service)] = Set(try uuids.map { try BluetoothUUID(parsing: $0) })
        }
        return Core.LinkGatt(connected: connected, servicesResolved: resolved, characteristics: characteristics)
    }

    static func names(_ effects: [Core.Effect]) -> [String] { DaemonCoreTests.names(effects) }

    /// The generation of the grace timer among `effects`, if one was started.
    static func timer(_ effects: [Core.Effect]) -> UInt64? {
        for case .gattGraceTimer(_, let generation) in effects { return generation }
        return nil
    }

    /// One look as relinkd takes it, with the lock's fff1 still missing:
    /// the timer of `generation` ends, the planner asks for fff1 again,
    /// StartNotify finds no object (a new wait), and the link is looked at.
    /// Returns what the look decided and the new wait's generation.
    static func look(_ core: inout Core, generation: UInt64, _ link: Core.LinkGatt?) throws -> ([String], UInt64) {
        #expect(names(core.handle(.gattGraceEnded(lock, generation: generation))) == ["commands [\"start \(try key("fff1").characteristic)\"]", "look"])
        let next = try #require(timer(core.handle(.characteristicMissing(lock, try key("fff1")))), "the look's StartNotify starts a new wait")
        return (names(core.handle(.gattLooked(lock, link))), next)
    }

    /// A missing characteristic starts one wait (one timer) and is told the
    /// operator once; a stale timer means nothing; the current one asks for
    /// the characteristic again and looks; a link that went down waits.
    @Test func aMissingCharacteristicIsWaitedForOnceAndToldOnce() throws {
        var core = try Self.linkedCore(["a.lock"])
        let fff1 = try Self.key("fff1")
        let first = core.handle(.characteristicMissing(Self.lock, fff1))
        let generation = try #require(Self.timer(first))
        #expect(Self.names(first) == ["grace timer \(generation)", "not yet on link \(fff1.characteristic)"])
        #expect(Self.names(core.handle(.characteristicMissing(Self.lock, fff1))) == [], "a wait runs and it was told")
        #expect(core.planner.unarmed(of: Self.lock) == [fff1])
        #expect(Self.names(core.handle(.gattGraceEnded(Self.lock, generation: generation + 7))) == [], "a stale timer")
        let (looked, _) = try Self.look(&core, generation: generation, try Self.link(resolved: false, connected: false))
        #expect(looked == ["wait [\(fff1.characteristic)]"])
    }

    /// A look at a link whose database is known and lacks the
    /// characteristic fails it for every identifier, in one commit, with
    /// `UnknownCharacteristic`; auto-connect and viewers follow; the wait ends.
    @Test func aCharacteristicNotInAKnownDatabaseFailsForEveryIdentifierAtOnce() throws {
        var core = try Self.linkedCore(["b.lock", "a.lock"])
        let fff1 = try Self.key("fff1")
        let generation = try #require(Self.timer(core.handle(.characteristicMissing(Self.lock, fff1))))
        let (looked, next) = try Self.look(&core, generation: generation, try Self.link(resolved: true, ["fff0": ["fff2"]]))
        let name = RelinkErrorName.unknownCharacteristic.rawValue
        #expect(looked == ["fail [\"a.lock \(fff1.characteristic) \(name)\", \"b.lock \(fff1.characteristic) \(name)\"]", "auto-connect", "viewers"])
        #expect(core.planner.route(Self.lock, characteristic: fff1).isEmpty, "both subscriptions are gone")
        #expect(!core.gattGrace.isWaiting(for: Self.lock))
        #expect(Self.names(core.handle(.gattGraceEnded(Self.lock, generation: next))) == [], "the wait ended with them")
    }

    /// A characteristic armed once (confirmed) whose database is not known
    /// yet: three reconnections in a row, then one said to come later,
    /// silent looks, and the fourth after 10 looks; one never confirmed
    /// gets one reconnection and then fails.
    @Test func aConfirmedCharacteristicIsRediscoveredWithABackOffAnUnconfirmedOneFails() throws {
        var core = try Self.linkedCore(["a.lock"])
        let fff1 = try Self.key("fff1"), unresolved = try Self.link(resolved: false)
        #expect(Self.names(core.handle(.notifyArmed(Self.lock, fff1))) == ["tell \(fff1.characteristic) notifying to a.lock", "after a.lock linkCarried"])
        var generation = try #require(Self.timer(core.handle(.characteristicMissing(Self.lock, fff1))))
        var decisions: [[String]] = []
        for _ in 0..<13 {
            let (looked, next) = try Self.look(&core, generation: generation, unresolved)
            decisions.append(looked)
            generation = next
        }
        let c = fff1.characteristic
        #expect(decisions[0..<3] == [["rediscover 1 [\(c)]"], ["rediscover 2 [\(c)]"], ["rediscover 3 [\(c)]"]])
        #expect(decisions[3] == ["rediscover after \(GattGrace.period * 9) [\(c)]"])
        let silent = decisions[4..<12].filter { !$0.isEmpty }
        #expect(silent.isEmpty, "\(decisions)")
        #expect(decisions[12] == ["rediscover 4 [\(c)]"])

        var unconfirmed = try Self.linkedCore(["a.lock"])
        generation = try #require(Self.timer(unconfirmed.handle(.characteristicMissing(Self.lock, fff1))))
        let (once, next) = try Self.look(&unconfirmed, generation: generation, unresolved)
        #expect(once == ["rediscover 1 [\(c)]"])
        let (then, _) = try Self.look(&unconfirmed, generation: next, unresolved)
        #expect(then == ["fail [\"a.lock \(c) \(RelinkErrorName.unknownCharacteristic.rawValue)\"]", "auto-connect", "viewers"])
    }

    /// Characteristics that appear are armed only when awaited, once; one
    /// that leaves a live link is told and waited for; a lost link ends the
    /// wait, and a look after it decides nothing.
    @Test func appearingAndLeavingCharacteristicsAndALostLink() throws {
        var core = try Self.linkedCore(["a.lock"])
        let fff1 = try Self.key("fff1")
        #expect(Self.names(core.handle(.characteristicsAppeared(Self.lock))) == [], "nothing awaited")
        _ = core.handle(.characteristicMissing(Self.lock, fff1))
        #expect(Self.names(core.handle(.characteristicsAppeared(Self.lock))) == ["commands [\"start \(fff1.characteristic)\"]"])
        #expect(Self.names(core.handle(.characteristicsAppeared(Self.lock))) == [], "no longer awaited")
        #expect(Self.names(core.handle(.notifyArmed(Self.lock, fff1))) == ["tell \(fff1.characteristic) notifying to a.lock", "after a.lock linkCarried"])
        let left = core.handle(.characteristicLeft(Self.lock, fff1))
        #expect(Self.names(left) == ["left link \(fff1.characteristic)",
                                     "tell \(fff1.characteristic) stopped \(RelinkErrorName.unknownCharacteristic.rawValue) to a.lock",
                                     "grace timer \(try #require(Self.timer(left)))"])
        #expect(core.planner.unarmed(of: Self.lock) == [fff1])
        _ = core.handle(.linkLost(Self.lock, try DaemonCoreTests.lockAddress(), why: "gone", cause: nil))
        #expect(Self.names(core.handle(.gattLooked(Self.lock, try Self.link(resolved: true, ["fff0": ["fff2"]])))) == [])
        #expect(core.planner.route(Self.lock, characteristic: fff1).count == 1, "a lost link fails nothing")
    }
}
