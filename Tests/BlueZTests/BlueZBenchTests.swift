import BenchSupport
import DBus
import Foundation
import Testing
@testable import BlueZ
import RelinkModel

/// The BlueZ layer against the simulated bench: a private dbus-daemon,
/// patched BlueZoo, and lock and band peripherals on their own adapters.
@Suite(.serialized) struct BlueZBenchTests {
    static let hci0 = try! ObjectPath("/org/bluez/hci0")
    static let lockPath = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02")
    static let bandPath = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_03")
    static let lockService = "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"
    static let lockState = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"
    static let lockCommand = "8e7f1a02-4b2c-4d1e-9a3f-72656c696e6b"
    static let heartRate = "0000180d-0000-1000-8000-00805f9b34fb"

    /// Runs `body` with a started bench and a running client; stops both.
    func withClient(_ body: (Bench, BlueZClient, EventLog) async throws -> Void) async throws {
        let bench = try await Bench.start()
        do {
            try await withClient(on: bench, body)
        } catch {
            await bench.stop()
            throw error
        }
        await bench.stop()
    }

    func withClient(on bench: Bench, _ body: (Bench, BlueZClient, EventLog) async throws -> Void) async throws {
        let connection = try await Connection.connect(to: .address(bench.busAddress))
        defer { connection.close() }
        let client = BlueZClient(connection: connection)
        let log = EventLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            group.addTask { try await connection.serve() }
            group.addTask { for await e in client.events { await log.append(e) } }
            // A generous bound: CI machines run several benches at once.
            try await client.waitUntilReady(timeout: .seconds(30))
            try await body(bench, client, log)
            group.cancelAll()
        }
    }

    /// Watches for 1 s that the device at `path` does not appear. A
    /// real-time wait (Tests/README.md): a discovery filter is tested by
    /// what it keeps out, and only time shows that.
    func observeNeverFound(_ client: BlueZClient, _ path: ObjectPath) async throws {
        try await observeQuietly(for: .seconds(1), "\(path) kept out by the discovery filter") {
            await client.mirror.device(path) == nil
        }
    }

    /// Watches for 600 ms, the lock back in range, that bluetoothd does
    /// not link it by itself. A real-time wait (Tests/README.md): what is
    /// tested is that auto-connect does *not* happen.
    func observeNotAutoConnected(_ client: BlueZClient, _ path: ObjectPath) async throws {
        try await observeQuietly(for: .milliseconds(600), "\(path) back in range and not auto-connected") {
            await client.mirror.device(path)?.connected == false
        }
    }

    func discover(_ client: BlueZClient, uuids: [String] = []) async throws {
        try await client.startDiscovery(adapter: Self.hci0, filter: DiscoveryFilter(services: Set(uuids.map { try BluetoothUUID(parsing: $0) })))
    }

    @Test func uuidFilterFindsOnlyMatchingPeripheral() async throws {
        try await withClient { _, client, _ in
            try await discover(client, uuids: [Self.lockService])
            try await client.wait(timeout: .seconds(10), "the lock") { $0.device(Self.lockPath) != nil }
            try await observeNeverFound(client, Self.bandPath)
            #expect(await client.mirror.device(Self.bandPath) == nil)
        }
        try await withClient { _, client, _ in
            try await discover(client, uuids: [Self.heartRate])
            try await client.wait(timeout: .seconds(10), "the band") { $0.device(Self.bandPath) != nil }
            try await observeNeverFound(client, Self.lockPath)
            #expect(await client.mirror.device(Self.lockPath) == nil)
        }
    }

    @Test func connectReadWriteNotifyAndBothNames() async throws {
        try await withClient { bench, client, log in
            try await discover(client)
            try await client.wait(timeout: .seconds(10), "the lock") { $0.device(Self.lockPath) != nil }
            #expect(await client.mirror.device(Self.lockPath)?.names.advertisingName == "RLK-7F3A")
            try await client.connect(Self.lockPath)
            try await client.waitForServices(Self.lockPath)
            try await client.wait(timeout: .seconds(5), "the GAP name") { $0.device(Self.lockPath)?.names.gapName == "Front Door" }
            let names = try #require(await client.mirror.device(Self.lockPath)?.names)
            #expect(names.advertisingName == "RLK-7F3A")

            // ServicesResolved can come before the last characteristic's
            // InterfacesAdded (real-bluez finding 3; seen on the bench under
            // load): wait for both characteristics, bounded.
            try await client.wait(timeout: .seconds(10), "the lock's characteristics") { m in
                m.characteristic(device: Self.lockPath, service: Self.lockService, characteristic: Self.lockState) != nil
                    && m.characteristic(device: Self.lockPath, service: Self.lockService, characteristic: Self.lockCommand) != nil
            }
            let state = try #require(await client.mirror.characteristic(device: Self.lockPath, service: Self.lockService, characteristic: Self.lockState))
            let command = try #require(await client.mirror.characteristic(device: Self.lockPath, service: Self.lockService, characteristic: Self.lockCommand))
            let before = try await client.read(state.path)
            #expect(!before.isEmpty)
            try await client.startNotify(state.path)
            try await client.write(command.path, Array("unlock".utf8))
            try await client.wait(timeout: .seconds(5), "the unlocked state") { $0.characteristic(state.path)?.value.map { String(decoding: $0, as: UTF8.self) } == "unlocked" }
            try await client.write(command.path, Array("lock".utf8), withResponse: false)
            try await client.wait(timeout: .seconds(5), "the locked state") { $0.characteristic(state.path)?.value.map { String(decoding: $0, as: UTF8.self) } == "locked" }
            try await waitUntil(timeout: .seconds(5)) {
                await log.values(of: state.path).map { String(decoding: $0, as: UTF8.self) }.suffix(2) == ["unlocked", "locked"]
            }

            // Renames: the GAP name changes over the link, the advertised
            // name is seen after the link is gone.
            try await bench.setGapName("lock", "Back Door")
            try await bench.setAdvName("lock", "RLK-NEW1")
            try await client.disconnect(Self.lockPath)
            try await client.wait(timeout: .seconds(10), "the new advertised name") { $0.device(Self.lockPath)?.names.advertisingName == "RLK-NEW1" }
            #expect(await client.mirror.device(Self.lockPath)?.names.gapName == "Front Door")
            try await client.connect(Self.lockPath)
            try await client.waitForServices(Self.lockPath)
            try await client.wait(timeout: .seconds(5), "the new GAP name") { $0.device(Self.lockPath)?.names.gapName == "Back Door" }
            #expect(await client.mirror.device(Self.lockPath)?.names.advertisingName == "RLK-NEW1")
            // The event stream is read by another task: give it a moment.
            try await waitUntil(timeout: .seconds(5)) {
                await log.nameChanges(of: Self.lockPath).contains(NameChange(source: .gap, previous: "Front Door", current: "Back Door"))
            }
            #expect(await log.nameChanges(of: Self.lockPath).contains(NameChange(source: .advertising, previous: "RLK-7F3A", current: "RLK-NEW1")))
        }
    }

    /// A Connect reply can overtake the Connected signal (they take
    /// different paths through the client); connect() returns only once the
    /// mirror shows the link, every time.
    @Test func connectReturnsOnlyOnceTheMirrorShowsTheLink() async throws {
        try await withClient { _, client, _ in
            try await discover(client)
            try await client.wait(timeout: .seconds(10), "the lock") { $0.device(Self.lockPath) != nil }
            for _ in 0..<15 {
                try await client.connect(Self.lockPath)
                #expect(await client.mirror.device(Self.lockPath)?.connected == true)
                try await client.waitForServices(Self.lockPath)
                try await client.disconnect(Self.lockPath)
                try await client.wait(timeout: .seconds(5), "the link down") { $0.device(Self.lockPath)?.connected == false }
            }
        }
    }

    @Test func outOfRangeDropsLinkAndConnectFailsClassifiedThenReconnects() async throws {
        try await withClient { bench, client, log in
            try await discover(client)
            try await client.wait(timeout: .seconds(10), "the lock") { $0.device(Self.lockPath) != nil }
            try await client.connect(Self.lockPath)
            try await client.waitForServices(Self.lockPath)
            try await bench.outOfRange("lock")
            try await client.wait(timeout: .seconds(10), "the link to drop") { $0.device(Self.lockPath)?.connected == false }
            // The mirror changes first; the log is filled by its own task from
            // the event stream, so wait for the event there too.
            try await waitUntil(timeout: .seconds(10)) {
                await log.contains(.mirror(.propertyChanged(path: Self.lockPath, interface: BlueZInterface.device, property: "Connected", old: .boolean(true), new: .boolean(false))))
            }
            do {
                try await client.connect(Self.lockPath)
                Issue.record("Connect to an out-of-range lock succeeded")
            } catch let e as BlueZError {
                #expect(e.name == "org.bluez.Error.Failed")
                #expect(e.message == "le-connection-abort-by-local")
                #expect(e.failureClass == .transient)
            }
            try await bench.inRange("lock")
            try await client.connect(Self.lockPath)
            try await client.waitForServices(Self.lockPath)
            #expect(await client.mirror.device(Self.lockPath)?.connected == true)
        }
    }

    @Test func bluetoothdRestartMidConnectionResyncsWithoutStaleObjects() async throws {
        try await withClient { bench, client, log in
            try await discover(client)
            try await client.wait(timeout: .seconds(10), "the lock") { $0.device(Self.lockPath) != nil }
            try await client.connect(Self.lockPath)
            try await client.waitForServices(Self.lockPath)
            let ownerBefore = await client.owner
            try await bench.restartBlueZ()
            try await waitUntil(timeout: .seconds(10)) { let o = await client.owner; return o != nil && o != ownerBefore }
            // The log is filled by its own task from the event stream: wait for it.
            try await waitUntil(timeout: .seconds(10)) { await log.contains(.reset(.bluetoothdRestarted)) }
            #expect(await log.contains(.reset(.bluetoothdRestarted)))
            // The restarted bluetoothd knows nothing of the old link.
            try await expectMirrorMatchesBus(client)
            #expect(await client.mirror.device(Self.lockPath)?.connected != true)
            // Discovery was re-applied by the layer: the lock is found again.
            try await client.wait(timeout: .seconds(10), "the lock again") { $0.device(Self.lockPath) != nil }
            try await client.connect(Self.lockPath)
            try await client.waitForServices(Self.lockPath)
        }
    }

    /// The GattProfile1 application for background auto-connect is
    /// accepted by bluetoothd, and registered again with a restarted one.
    @Test func autoConnectProfileIsRegisteredAgainAfterBluetoothdRestart() async throws {
        try await withClient { bench, client, _ in
            try await client.setAutoConnect(uuids: [Self.lockService], root: try ObjectPath("/org/relink/autoconnect"))
            let first = await client.autoConnectRegistrations
            #expect(first.map(\.adapter).contains(Self.hci0))
            let ownerBefore = await client.owner
            try await bench.restartBlueZ()
            try await waitUntil(timeout: .seconds(10)) {
                await client.autoConnectRegistrations.contains { $0.owner != ownerBefore && $0.owner != nil && $0.adapter == Self.hci0 }
            }
        }
    }

    /// The bench's bluetoothd auto-connects known devices offering a
    /// profile's UUIDs, reading them once at registration (as BlueZ does):
    /// a change of UUIDs takes effect, and an empty list ends auto-connect.
    @Test func autoConnectFollowsTheProfilesUUIDs() async throws {
        try await withClient { bench, client, _ in
            let root = try ObjectPath("/org/relink/autoconnect")
            try await discover(client)
            try await client.wait(timeout: .seconds(10), "the lock") { $0.device(Self.lockPath) != nil }
            try await client.connect(Self.lockPath)
            try await client.waitForServices(Self.lockPath)
            func awayAndBack() async throws {
                try await bench.outOfRange("lock")
                try await client.wait(timeout: .seconds(10), "the link to drop") { $0.device(Self.lockPath)?.connected == false }
                try await bench.inRange("lock")
            }
            // Another service first, then the lock's: only the change makes
            // bluetoothd reconnect the lock by itself.
            try await client.setAutoConnect(uuids: [Self.heartRate], root: root)
            try await awayAndBack()
            try await observeNotAutoConnected(client, Self.lockPath)
            #expect(await client.mirror.device(Self.lockPath)?.connected == false, "auto-connected for a profile it does not offer")
            try await client.setAutoConnect(uuids: [Self.heartRate, Self.lockService], root: root)
            try await client.wait(timeout: .seconds(10), "the lock auto-connected") { $0.device(Self.lockPath)?.servicesResolved == true }
            try await awayAndBack()
            try await client.wait(timeout: .seconds(10), "the lock auto-connected again") { $0.device(Self.lockPath)?.servicesResolved == true }
            // No UUIDs: unregistered, the lock stays away.
            try await client.setAutoConnect(uuids: [], root: root)
            try await awayAndBack()
            try await observeNotAutoConnected(client, Self.lockPath)
            #expect(await client.mirror.device(Self.lockPath)?.connected == false, "auto-connected after the profile ended")
        }
    }

    @Test func adapterPowerCycleResumesDiscoveryWithItsFilter() async throws {
        try await withClient { bench, client, log in
            try await discover(client, uuids: [Self.lockService])
            try await client.wait(timeout: .seconds(10), "discovering") { $0.adapter(Self.hci0)?.discovering == true }
            try await bench.powerCycleCentral(offSeconds: 0.5)
            try await waitUntil(timeout: .seconds(10)) { await log.contains(.adapterPowered(Self.hci0, false)) }
            try await waitUntil(timeout: .seconds(10)) { await log.contains(.adapterPowered(Self.hci0, true)) }
            try await client.wait(timeout: .seconds(10), "discovering again") { $0.adapter(Self.hci0)?.discovering == true }
            try await client.wait(timeout: .seconds(10), "the lock") { $0.device(Self.lockPath) != nil }
            try await observeNeverFound(client, Self.bandPath)
            #expect(await client.mirror.device(Self.bandPath) == nil, "the filter was lost")
        }
    }

    /// After a random sequence of operations on the bench (each causing
    /// adds, removes or property changes), the mirror equals a fresh
    /// GetManagedObjects.
    @Test func mirrorMatchesManagedObjectsAfterRandomOperations() async throws {
        try await withClient { bench, client, _ in
            var rng = SplitMix64(seed: 7)
            try await discover(client)
            try await client.wait(timeout: .seconds(10), "both") { $0.device(Self.lockPath) != nil && $0.device(Self.bandPath) != nil }
            for step in 0..<25 {
                let target = rng.next() % 2 == 0 ? "lock" : "band"
                let path = target == "lock" ? Self.lockPath : Self.bandPath
                switch rng.next() % 6 {
                case 0: try? await client.connect(path, timeout: .seconds(5))
                case 1: try? await client.disconnect(path)
                case 2: try await bench.setAdvName(target, "N\(step)")
                case 3: try await bench.outOfRange(target)
                case 4: try await bench.inRange(target)
                default: try await bench.push(target)
                }
                // Each step's signals reach the mirror before the next step.
                try await expectMirrorMatchesBus(client)
            }
            try await client.stopDiscovery(adapter: Self.hci0)
            try await expectMirrorMatchesBus(client)
        }
    }

    /// Compares the mirror with a fresh GetManagedObjects, waiting
    /// (bounded) for in-flight signals to arrive.
    func expectMirrorMatchesBus(_ client: BlueZClient) async throws {
        var last: ManagedObjects = [:]
        do {
            try await eventually(timeout: .seconds(10), "the mirror to match GetManagedObjects") {
                guard let reply = try? await client.connection.call(
                          destination: BlueZInterface.service, path: .root, interface: BlueZInterface.objectManager, method: "GetManagedObjects"),
                      let objects = try? reply.body.first?.managedObjects() else { return false }
                last = Self.withoutForgottenRSSI(objects)
                return Self.withoutForgottenRSSI(await client.mirror.objects) == last
            }
        } catch is TimeoutError {
            let mirrored = Self.withoutForgottenRSSI(await client.mirror.objects)
            #expect(mirrored == last, "differences: \(Self.differences(mirrored, last))")
        }
    }

    /// Real BlueZ drops `RSSI` when discovery ends and signals it as
    /// invalidated; the bench signals the same but, as sdbus cannot hide a
    /// property, still reads 0 (bench/README.md). Compare as BlueZ would.
    static func withoutForgottenRSSI(_ tree: ManagedObjects) -> ManagedObjects {
        tree.mapValues { interfaces in
            var i = interfaces
            if i[BlueZInterface.device]?["RSSI"] == .int16(0) { i[BlueZInterface.device]?["RSSI"] = nil }
            return i
        }
    }

    /// A short description of where two trees differ.
    static func differences(_ a: ManagedObjects, _ b: ManagedObjects) -> [String] {
        var out: [String] = []
        for path in Set(a.keys).union(b.keys).sorted() {
            let ia = a[path] ?? [:], ib = b[path] ?? [:]
            for iface in Set(ia.keys).union(ib.keys).sorted() {
                let pa = ia[iface], pb = ib[iface]
                guard let pa, let pb else { out.append("\(path) \(iface): \(pa == nil ? "missing in mirror" : "not on bus")"); continue }
                for key in Set(pa.keys).union(pb.keys).sorted() where pa[key] != pb[key] {
                    out.append("\(path) \(iface).\(key): mirror \(String(describing: pa[key])) bus \(String(describing: pb[key]))")
                }
            }
        }
        return Array(out.prefix(20))
    }
}

func waitUntil(timeout: Duration, _ condition: () async -> Bool) async throws {
    do {
        try await eventually(timeout: timeout, "a condition", condition)
    } catch is TimeoutError {
        Issue.record("condition not met within \(timeout)")
    }
}

/// Every event the client emitted, in order.
actor EventLog {
    private(set) var events: [BlueZEvent] = []
    func append(_ e: BlueZEvent) { events.append(e) }
    func contains(_ e: BlueZEvent) -> Bool { events.contains(e) }
    func values(of characteristic: ObjectPath) -> [[UInt8]] {
        events.compactMap { if case .mirror(.valueUpdated(let u)) = $0, u.characteristic == characteristic { u.value } else { nil } }
    }
    func nameChanges(of device: ObjectPath) -> [NameChange] {
        events.compactMap { if case .mirror(.nameChanged(device, let c)) = $0 { c } else { nil } }
    }
}
