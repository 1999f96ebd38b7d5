import DaemonCore
import RelinkModel
import Restoration
import Testing

/// Whom the daemon core tells that a subscription's notifications started
/// or stopped flowing on the link (`notification-state` events,
/// DaemonCore+Notifying.swift), and why: as tables, no bus, no BlueZ.
@Suite struct NotificationStateCoreTests {
    typealias Core = DaemonCore<ManualClock>

    static let lock = DaemonCoreTests.lock
    static func names(_ effects: [Core.Effect]) -> [String] { DaemonCoreTests.names(effects) }
    static func id(_ name: String) throws -> RestoreIdentifier { try DaemonCoreTests.identifier(name) }
    static func subscription(_ name: String, _ key: CharacteristicKey) throws -> Subscription {
        Subscription(identifier: try id(name), peripheral: lock, characteristic: key)
    }

    /// Told once per link to every subscriber, when bluetoothd confirms the
    /// StartNotify; a lost link tells them it stopped, with the link's
    /// failure, before the machines hear of it; a reply that comes after
    /// the link went down tells nothing.
    @Test func aLinksNotificationsStartOnceAndStopWithTheLink() throws {
        var core = try GattCoreTests.linkedCore(["b.lock", "a.lock"])
        let fff1 = try GattCoreTests.key("fff1"), c = fff1.characteristic
        #expect(Self.names(core.handle(.notifyArmed(Self.lock, fff1))) == ["tell \(c) notifying to a.lock,b.lock", "after a.lock linkCarried"])
        #expect(Self.names(core.handle(.notifyArmed(Self.lock, fff1))) == [], "told once per link")
        #expect(core.planner.isNotifying(Self.lock, fff1))
        let lost = Self.names(core.handle(.linkLost(Self.lock, try DaemonCoreTests.lockAddress(), why: "gone", cause: nil)))
        #expect(lost == ["tell \(c) stopped \(RelinkErrorName.linkLost.rawValue) to a.lock,b.lock", "end notify sessions of lock",
                         "feed [\"a.lock\"] disconnected(\(try DaemonCoreTests.lockAddress()))"])
        #expect(!core.planner.isNotifying(Self.lock, fff1))
        #expect(Self.names(core.handle(.notifyArmed(Self.lock, fff1))) == [], "a late reply: not armed on any link")
        #expect(Self.names(core.handle(.linkLost(Self.lock, try DaemonCoreTests.lockAddress(), why: "gone", cause: nil))).count == 2,
                "nothing notified on a link that is down: nobody told")
    }

    /// A subscriber that joins a characteristic already notifying is told at
    /// once (its StartNotify is shared); one that leaves it is told it
    /// stopped, with no reason (it asked), and only the last one stops it on
    /// the link.
    @Test func subscribersJoiningAndLeavingANotifyingCharacteristic() throws {
        var core = try GattCoreTests.linkedCore(["a.lock"])
        let fff1 = try GattCoreTests.key("fff1"), c = fff1.characteristic
        let fff2 = try GattCoreTests.key("fff2")
        _ = core.handle(.notifyArmed(Self.lock, fff1))
        #expect(Self.names(core.handle(.subscribed(try Self.subscription("b.lock", fff1)))) == ["tell \(c) notifying to b.lock"])
        #expect(Self.names(core.handle(.subscribed(try Self.subscription("b.lock", fff2)))) == ["commands [\"start \(fff2.characteristic)\"]"],
                "not notifying yet: armed, told when bluetoothd confirms")
        #expect(Self.names(core.handle(.unsubscribed(try Self.subscription("a.lock", fff1)))) == ["tell \(c) stopped asked to a.lock"])
        #expect(core.planner.isNotifying(Self.lock, fff1), "b.lock still wants it")
        #expect(Self.names(core.handle(.unsubscribed(try Self.subscription("b.lock", fff1))))
                == ["tell \(c) stopped asked to b.lock", "commands [\"stop \(c)\"]"])
        #expect(!core.planner.isNotifying(Self.lock, fff1))
        #expect(Self.names(core.handle(.unsubscribed(try Self.subscription("b.lock", fff2)))) == ["commands [\"stop \(fff2.characteristic)\"]"],
                "never confirmed: nothing to tell")
        #expect(Self.names(core.handle(.notifyArmed(Self.lock, fff2))) == [], "a reply after the last one left tells nobody")
    }

    /// bluetoothd gone, bluetoothd back without a loss seen, and the
    /// adapter powered off each end every link's notifications, with their own reason.
    @Test func bluetoothdAndTheAdapterEndEveryLinksNotifications() throws {
        let fff1 = try GattCoreTests.key("fff1"), c = fff1.characteristic
        let cases: [(Core.Input, String)] = [
            (.bluetoothdLost, RelinkErrorName.bluetoothdRestarted.rawValue),
            (.bluetoothdBack(.restarted, adapterOn: true), RelinkErrorName.bluetoothdRestarted.rawValue),
            (.adapterPowered(false), RelinkErrorName.adapterOff.rawValue),
        ]
        for (input, errorName) in cases {
            var core = try GattCoreTests.linkedCore(["a.lock"])
            _ = core.handle(.notifyArmed(Self.lock, fff1))
            let effects = Self.names(core.handle(input))
            #expect(effects.filter { $0.hasPrefix("tell") } == ["tell \(c) stopped \(errorName) to a.lock"], "\(input): \(effects)")
            #expect(!core.planner.isNotifying(Self.lock, fff1))
            #expect(Self.names(core.handle(.bluetoothdLost)).filter { $0.hasPrefix("tell") }.isEmpty, "told once")
        }
    }

    /// A StartNotify the peripheral refuses is told to every subscriber
    /// once per link (again on the next link); a failure because the link
    /// or bluetoothd went away, or a timeout, is told by their own end.
    @Test func aRefusedStartNotifyIsToldOncePerLinkAndALinkFailureIsNot() throws {
        var core = try GattCoreTests.linkedCore(["b.lock", "a.lock"])
        let fff1 = try GattCoreTests.key("fff1"), c = fff1.characteristic
        let attError = ConnectionFailure(.transient, errorName: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x80")
        let notSupported = ConnectionFailure(.notSupported, errorName: "org.bluez.Error.NotSupported", message: "Operation is not supported")
        for failure in [ConnectionFailure(.transient, errorName: "org.bluez.Error.Failed", message: "Not connected"),
                        ConnectionFailure(.timeout, errorName: "org.freedesktop.DBus.Error.NoReply", message: "no reply"),
                        ConnectionFailure(.deviceGone, errorName: "org.freedesktop.DBus.Error.UnknownObject", message: "gone")] {
            #expect(Self.names(core.handle(.notifyFailed(Self.lock, fff1, failure))) == [], "\(failure)")
            #expect(core.planner.unarmed(of: Self.lock) == [fff1], "armed again at the next link")
            _ = core.planner.linkUp(Self.lock)
        }
        #expect(Self.names(core.handle(.notifyFailed(Self.lock, fff1, attError))) == ["tell \(c) stopped org.bluez.Error.Failed to a.lock,b.lock"])
        _ = core.planner.linkUp(Self.lock)
        #expect(Self.names(core.handle(.notifyFailed(Self.lock, fff1, notSupported))) == [], "once per link")
        _ = core.handle(.linkLost(Self.lock, try DaemonCoreTests.lockAddress(), why: "gone", cause: nil))
        _ = core.planner.linkUp(Self.lock)
        #expect(Self.names(core.handle(.notifyFailed(Self.lock, fff1, notSupported))) == ["tell \(c) stopped org.bluez.Error.NotSupported to a.lock,b.lock"],
                "a new link: told again")
        _ = core.planner.linkUp(Self.lock)
        #expect(Self.names(core.handle(.notifyArmed(Self.lock, fff1))).first == "tell \(c) notifying to a.lock,b.lock", "then accepted")
    }
}
