import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// `notification-state` events (issue 35, item 1; CoreBluetooth's
/// `peripheral(_:didUpdateNotificationStateFor:error:)`) through the whole
/// daemon, on the fake bluetoothd: notifications flow once the link's
/// StartNotify is confirmed, stop with the link and with the identifier's
/// Unsubscribe, are refused by the peripheral, and `Register` says which
/// flow now.
@Suite("Daemon in-process: notification state")
struct NotificationStateTests {
    typealias T = RestoreCycleTests

    /// The identifier's `notification-state` events, in order: whether
    /// notifying, and the reason's error name ("" for none).
    static func states(_ d: InProcessDaemon, _ id: RestoreIdentifier = T.id) async throws -> [String] {
        try await d.events(id).compactMap { event -> String? in
            guard case .notificationState(_, let key, let notifying, let reason)? = event.payload else { return nil }
            #expect(key == T.key)
            return notifying ? "notifying" : "stopped \(reason?.errorName ?? "")"
        }
    }

    /// The characteristics `Register` says notify now, on the band.
    static func notifying(_ d: InProcessDaemon, _ id: RestoreIdentifier = T.id) async throws -> [String] {
        let restored = try await AdapterStateTests.restored(d, id)
        guard case .array(_, let peripherals)? = restored["peripherals"], case .dictionary(_, _, let entries)? = peripherals.first,
              case .array(_, let pairs)? = entries.first(where: { $0.key.stringValue == "notifying" })?.value.unwrapped else { return ["none"] }
        return pairs.map { pair in
            guard case .structure(let fields) = pair.unwrapped, fields.count == 2 else { return "?" }
            return fields.compactMap(\.stringValue).joined(separator: "/")
        }
    }

    @Test func notificationsStartWithTheLinkStopWithItAndWithUnsubscribe() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        try await eventually("told the band's notifications flow") { try await Self.states(d) == ["notifying"] }
        #expect(try await Self.notifying(d) == ["\(T.key.service)/\(T.key.characteristic)"])

        await fake.setInRange(T.band, false)
        try await eventually("told they stopped with the link") { try await Self.states(d).count == 2 }
        #expect(try await Self.states(d) == ["notifying", "stopped \(RelinkErrorName.linkLost.rawValue)"])
        let kinds = try await d.events(T.id).map(\.kind)
        let stopped = try #require(kinds.lastIndex(of: "notification-state")), down = try #require(kinds.lastIndex(of: "disconnected"))
        #expect(stopped < down, "told before the link's disconnected: \(kinds)")
        #expect(try await Self.notifying(d).isEmpty)

        await fake.setInRange(T.band, true)
        try await eventually("told they flow again on the new link") { try await Self.states(d).count == 3 }
        try await d.api(.unsubscribe(T.id, .address(T.band), T.key))
        try await eventually("told they stopped because it unsubscribed") { try await Self.states(d).count == 4 }
        #expect(try await Self.states(d) == ["notifying", "stopped \(RelinkErrorName.linkLost.rawValue)", "notifying", "stopped "])
        await d.stop()
    }

    /// A second identifier subscribing to a characteristic already
    /// notifying is told at once (it shares the StartNotify); the first is
    /// not told again.
    @Test func aSubscriberJoiningFlowingNotificationsIsToldAtOnce() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        try await eventually("the first told") { try await Self.states(d) == ["notifying"] }
        let second = try RestoreIdentifier("second")
        try await d.submit(.register(second, uid: 0))
        try await d.submit(.subscribe(second, T.band, T.key))
        try await eventually("the second told") { try await Self.states(d, second) == ["notifying"] }
        #expect(try await Self.notifying(d, second) == ["\(T.key.service)/\(T.key.characteristic)"])
        #expect(try await Self.states(d) == ["notifying"], "the first is not told again")
        await d.stop()
    }

    /// The peripheral refuses the CCC write: told once for the link with
    /// BlueZ's error, not notifying in `Register`; on the next link it
    /// accepts and the identifier is told it flows.
    @Test func aRefusedSubscriptionIsToldWithThePeripheralsError() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        await fake.refuseNotifications(T.band, service: T.heartRate, characteristic: T.measurement,
                                       with: BlueZError(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x80"))
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        try await eventually("told the peripheral refused") { try await Self.states(d) == ["stopped org.bluez.Error.Failed"] }
        #expect(try await Self.notifying(d).isEmpty)
        let message = try await d.events(T.id).compactMap { event -> String? in
            if case .notificationState(_, _, _, let reason)? = event.payload { reason?.message } else { nil }
        }
        #expect(message == ["Operation failed with ATT error: 0x80"])

        await fake.refuseNotifications(T.band, service: T.heartRate, characteristic: T.measurement, with: nil)
        await fake.dropLink(T.band)
        try await eventually("accepted on the next link") { try await Self.states(d).last == "notifying" }
        #expect(try await Self.states(d) == ["stopped org.bluez.Error.Failed", "notifying"], "nothing stopped on a link it never flowed on")
        await d.stop()
    }
}
