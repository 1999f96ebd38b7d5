import BlueZ
import BlueZFake
import DBus
import Foundation
import Logging
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import RelinkStore
import Restoration
import Testing

/// What programs are told of relinkd's adapter (docs/api/events.md,
/// `adapter-state`; Manager1's `AdapterState`): an event to every
/// identifier for each change, the links back once it is on again, the
/// state in `Register`'s restored state, and at start-up an event only when
/// it changed while relinkd was down.
@Suite("Daemon in-process: adapter state")
struct AdapterStateTests {
    typealias T = RestoreCycleTests
    /// An identifier with no intent: it is told too.
    static let watcher = (try? RestoreIdentifier("watcher")) ?? { fatalError("valid") }()
    static let allRoles: [AdapterRole] = [.central, .peripheral, .centralPeripheral]

    /// The adapter states stored for `id`, in order.
    static func announced(_ d: InProcessDaemon, _ id: RestoreIdentifier) async throws -> [AdapterStatus] {
        try await d.events(id).compactMap { event in
            if case .adapterState(let adapter, let status)? = event.payload, adapter == "hci0" { return status }
            return nil
        }
    }

    /// The kinds stored for `id` after the first `skip`.
    static func kinds(_ d: InProcessDaemon, _ id: RestoreIdentifier, after skip: Int) async throws -> [String] {
        Array(try await d.events(id).map(\.kind).dropFirst(skip))
    }

    /// A daemon with the band linked for `band` and a second identifier with nothing.
    static func linkedWithWatcher(_ fake: FakeBlueZ, directory: String? = nil) async throws -> InProcessDaemon {
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try directory ?? InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        try await d.submit(.register(Self.watcher, uid: 0))
        return d
    }

    /// `Register`'s restored dictionary for `id`.
    static func restored(_ d: InProcessDaemon, _ id: RestoreIdentifier) async throws -> [String: DBusValue] {
        let values = try await d.daemon.submit(.register(id, nameRule: nil, replay: false, eventLimit: nil),
                                               from: APICaller(name: ":1.7", uid: 0)).get().values
        guard values.count == 2, case .dictionary(_, _, let entries) = values[1] else {
            Issue.record("Register answered \(values)")
            return [:]
        }
        return Dictionary(entries.compactMap { entry in entry.key.stringValue.map { ($0, entry.value.unwrapped) } }) { a, _ in a }
    }

    @Test func adapterOffIsAnEventToEveryIdentifierAndOnIsAnEventWithTheLinkBack() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linkedWithWatcher(fake)
        let before = try await d.events(T.id).count
        #expect(try await Self.announced(d, T.id).isEmpty, "nothing changed since the band's identifier was made")

        await fake.setAdapterPowered(false)
        let off = AdapterStatus(.poweredOff, roles: Self.allRoles)
        try await eventually("both identifiers told the adapter is off") {
            let band = try await Self.announced(d, T.id), watcher = try await Self.announced(d, Self.watcher)
            return band == [off] && watcher == [off]
        }
        #expect(await d.daemon.core.adapter.current == off)
        try await eventually("the band's intent waits for the adapter") { await d.state(T.id, T.band) == "waiting-for-adapter" }

        await fake.setAdapterPowered(true)
        let on = AdapterStatus(.poweredOn, roles: Self.allRoles)
        try await eventually("both told it is on again, and the band connected") {
            guard try await Self.announced(d, T.id) == [off, on], try await Self.announced(d, Self.watcher) == [off, on] else { return false }
            guard await d.state(T.id, T.band) == "connected" else { return false }
            // The link is up before its event's group commit: wait for the store too.
            let stored = try await Self.kinds(d, T.id, after: before)
            return stored.lastIndex(of: "adapter-state").map { stored[$0...].contains("connected") } == true
        }
        let kinds = try await Self.kinds(d, T.id, after: before)
        let lastOn = try #require(kinds.lastIndex(of: "adapter-state"))
        #expect(kinds.contains("disconnected"), "the link's drop is told: \(kinds)")
        #expect(kinds[lastOn...].contains("connected"), "the link comes back after the adapter-state event that says it is on: \(kinds)")
        await d.stop()
        let store = try RelinkStore(directory: d.directory, logger: Logger(label: "test"))
        defer { try? store.close() }
        #expect(try await store.loadState().adapterStates["hci0"] == on, "the last announced state is stored")
    }

    /// bluetoothd says an adapter is going off (`PowerState` `on-disabling`)
    /// before its links drop and before `Powered` turns false. Real gateway,
    /// Debian 13 (docs/real-bluez.md, G10): a link-loss read as an ordinary
    /// one started a round whose background auto-connect made bluetoothd ask
    /// the kernel to add the device while it powered off; the kernel refused,
    /// bluetoothd forgot it had the device armed, and a `forget` later left the
    /// kernel connecting it for good. relinkd takes `on-disabling` as off: no
    /// round, no auto-connect, no `Connect` until the adapter is on again.
    @Test func anAdapterGoingOffStartsNoRoundForTheLinksItDrops() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linkedWithWatcher(fake)
        let callsBefore = await fake.calls.count
        await fake.setAdapterPowered(false)
        try await eventually("the band's intent waits for the adapter") { await d.state(T.id, T.band) == "waiting-for-adapter" }
        // One more input through the loop, after every BlueZ signal of the power-off.
        _ = try await d.submit(.register(try RestoreIdentifier("after-power-off"), uid: 0))
        let asked = await fake.calls.dropFirst(callsBefore).filter {
            switch $0 {
            case .connect, .setAutoConnect, .startDiscovery: true
            default: false
            }
        }
        #expect(asked.isEmpty, "asked bluetoothd while its adapter went off: \(asked)")
        #expect(try await Self.kinds(d, T.id, after: 0).filter { $0 == "disconnected" }.count == 1, "the drop told once")

        await fake.setAdapterPowered(true)
        try await eventually("the band connected again") { await d.state(T.id, T.band) == "connected" }
        await d.stop()
    }

    @Test func bluetoothdGoneIsBluetoothdMissingAndItsReturnPoweredOnWithTheLinkBack() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linkedWithWatcher(fake)
        #expect(!(await d.daemon.summary).contains("adapter"), "STATUS= names the adapter only when it is not on")
        await fake.stopBluetoothd()
        try await eventually("told bluetoothd is gone") {
            try await Self.announced(d, Self.watcher) == [AdapterStatus(.bluetoothdMissing)]
        }
        #expect((await d.daemon.summary).contains("adapter hci0: bluetoothdMissing"), "STATUS= says why every link is down")
        #expect(try await Self.restored(d, Self.watcher)["adapter_state"] == .string("bluetoothdMissing"))
        await fake.startBluetoothd()
        try await eventually("told the adapter is on again, and the band connected") {
            guard try await Self.announced(d, T.id).map(\.state) == [.bluetoothdMissing, .poweredOn] else { return false }
            return await d.state(T.id, T.band) == "connected"
        }
        await d.stop()
    }

    @Test func anAdapterRemovedIsMissingWithoutRolesAndOneBlockedIsBlocked() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linkedWithWatcher(fake)
        await fake.removeAdapter()
        try await eventually("told the adapter is missing") { try await Self.announced(d, Self.watcher) == [AdapterStatus(.missing)] }
        #expect(try await Self.restored(d, Self.watcher)["adapter_roles"] == .array(.string, []))
        await fake.addAdapter()
        try await eventually("told it is back, and the band connected") {
            guard try await Self.announced(d, T.id).last == AdapterStatus(.poweredOn, roles: Self.allRoles) else { return false }
            return await d.state(T.id, T.band) == "connected"
        }
        await fake.setAdapterBlocked(true)
        try await eventually("told it is blocked") { try await Self.announced(d, Self.watcher).last?.state == .blocked }
        await fake.setAdapterBlocked(false)
        // Unblocked, it is off (PowerState `off`) until bluetoothd powers it on.
        try await eventually("told it is on once unblocked, and the band connected") {
            guard try await Self.announced(d, T.id).map(\.state) == [.missing, .poweredOn, .blocked, .poweredOff, .poweredOn] else { return false }
            return await d.state(T.id, T.band) == "connected"
        }
        await d.stop()
    }

    @Test func aBusThatRefusesRelinkdsCallsIsNotPermittedUntilItLetsThemThrough() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linkedWithWatcher(fake)
        await fake.setAccessRefused(true)
        try await eventually("told relinkd is not permitted") { try await Self.announced(d, Self.watcher) == [AdapterStatus(.notPermitted)] }
        #expect(try await Self.restored(d, T.id)["adapter_state"] == .string("notPermitted"))
        await fake.setAccessRefused(false)
        try await eventually("told the adapter is on, and the band connected") {
            guard try await Self.announced(d, T.id).map(\.state) == [.notPermitted, .poweredOn] else { return false }
            return await d.state(T.id, T.band) == "connected"
        }
        await d.stop()
    }

    @Test func theRestoredStateAndStatusCarryTheAdapterStateNow() async throws {
        let fake = FakeBlueZ(roles: ["central"])
        let d = try await Self.linkedWithWatcher(fake)
        var restored = try await Self.restored(d, T.id)
        #expect(restored["adapter_state"] == .string("poweredOn"))
        #expect(restored["adapter_roles"] == .array(.string, [.string("central")]))
        await fake.setAdapterPowered(false)
        try await eventually("the adapter seen off") { await d.daemon.core.adapter.current?.state == .poweredOff }
        restored = try await Self.restored(d, T.id)
        #expect(restored["adapter_state"] == .string("poweredOff"))
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try await d.daemon.statusJSON().utf8)) as? [String: Any])
        #expect(status["adapterState"] as? String == "poweredOff" && status["adapterRoles"] as? [String] == ["central"])
        await d.stop()
    }

    @Test func aRestartAnnouncesTheStateOnlyWhenItChangedWhileRelinkdWasDown() async throws {
        let fake = FakeBlueZ()
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await Self.linkedWithWatcher(fake, directory: directory)
        await first.stop()

        let unchanged = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("the link restored") { await unchanged.state(T.id, T.band) == "connected" }
        #expect(try await Self.announced(unchanged, Self.watcher).isEmpty, "a restart with the adapter as it was adds nothing")
        await unchanged.stop()

        await fake.setAdapterPowered(false)  // while relinkd is down
        let changed = try await InProcessDaemon(fake: fake, directory: directory)
        let off = AdapterStatus(.poweredOff, roles: Self.allRoles)
        #expect(try await Self.announced(changed, Self.watcher) == [off], "committed at start-up, before any client is answered")
        #expect(try await Self.announced(changed, T.id) == [off])
        #expect(try await Self.restored(changed, T.id)["adapter_state"] == .string("poweredOff"))
        await fake.setAdapterPowered(true)
        try await eventually("on again: told, and the band connected") {
            guard try await Self.announced(changed, T.id) == [off, AdapterStatus(.poweredOn, roles: Self.allRoles)] else { return false }
            return await changed.state(T.id, T.band) == "connected"
        }
        await changed.stop()
    }
}
