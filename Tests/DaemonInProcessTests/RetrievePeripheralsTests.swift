import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// `Central1.RetrievePeripherals` and `RetrieveConnectedPeripherals` (issue
/// 35 item 2; CoreBluetooth's `retrievePeripheralsWithIdentifiers:` and
/// `retrieveConnectedPeripheralsWithServices:`): known peripherals by their
/// identifiers, devices another program connected by their services, the
/// access rules of docs/api/access.md, and the adoption of a retrieved link
/// with the already-connected strategy.
@Suite("Daemon in-process: retrieving peripherals")
struct RetrievePeripheralsTests {
    typealias T = RestoreCycleTests
    static let alice = APICaller(name: ":1.20", uid: 1000)
    static let bob = APICaller(name: ":1.21", uid: 1001)
    static let bobs = (try? RestoreIdentifier("bobs")) ?? { fatalError("valid") }()

    /// The entries of a retrieve reply, as `[key: value]`.
    static func entries(_ result: APIResult) -> [[String: DBusValue]] {
        guard case .array(_, let items)? = result.values.first else { return [] }
        return items.map { item in
            guard case .dictionary(_, _, let pairs) = item else { return [:] }
            return Dictionary(pairs.compactMap { p in p.key.stringValue.map { ($0, p.value.unwrapped) } }) { a, _ in a }
        }
    }

    static func addresses(_ result: APIResult) -> [String] {
        entries(result).compactMap { $0["address"]?.stringValue }
    }

    @Test func aDeviceAnotherProgramConnectedIsRetrievedByItsServiceAndAdopted() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(T.id, uid: Self.alice.uid))
        let none = try await d.api(.retrieveConnectedPeripherals(T.id, [T.heartRate]), as: Self.alice)
        #expect(Self.entries(none).isEmpty, "not connected yet")

        await fake.connectByAnotherProgram(T.band)
        try await eventually("bluetoothd shows the band connected") {
            await d.daemon.bluez.mirror.device(address: T.band.string, adapter: d.daemon.adapterPath)?.connected == true
        }
        let other = try await d.api(.retrieveConnectedPeripherals(T.id, [BluetoothUUID(shortValue: 0x180F)]), as: Self.alice)
        #expect(Self.entries(other).isEmpty, "it offers no battery service")
        let found = try await d.api(.retrieveConnectedPeripherals(T.id, [T.heartRate, BluetoothUUID(shortValue: 0x180F)]), as: Self.alice)
        let entry = try #require(Self.entries(found).first)
        #expect(Self.addresses(found) == [T.band.string])
        #expect(entry["connected"] == .boolean(true))
        guard case .array(_, let services)? = entry["services"] else { Issue.record("no services: \(entry)"); return }
        #expect(services.compactMap(\.stringValue).contains(T.heartRate.string), "\(services)")
        let id = try #require(entry["id"]?.stringValue)
        #expect(await d.daemon.peripheralID(for: T.band)?.description == id, "the device is a peripheral relinkd knows")
        #expect(await d.daemon.known.peripherals[try PeripheralID(parsing: id)] != nil, "stored")

        // By its identifier now, and adopted without a strategy of its own.
        let again = try await d.api(.retrievePeripherals(T.id, [.id(try PeripheralID(parsing: id))]), as: Self.alice)
        #expect(Self.addresses(again) == [T.band.string])
        _ = try await d.api(.connect(T.id, .id(try PeripheralID(parsing: id)), try T.options([.alreadyConnected])), as: Self.alice)
        try await eventually("the link adopted") { try await d.events(T.id).contains { $0.kind == "connected" } }
        let adopted = try await d.events(T.id).first { $0.kind == "connected" }?.payload
        guard case .connected(_, _, let route, _)? = adopted else { Issue.record("no connected event"); return }
        #expect(route == .alreadyConnected, "another program's link, adopted")
        await d.stop()
    }

    /// Unknown peripherals are left out, the order named is kept and a
    /// peripheral named twice comes once; another user's peripheral is
    /// left out as an unknown one is, until that user's own identifier
    /// retrieves it as connected (their discovery of it).
    @Test func retrievePeripheralsKeepsTheOrderAndTheAccessRules() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(T.id, uid: Self.alice.uid))
        try await d.submit(.connect(T.id, T.band, try T.options()))
        try await eventually("alice's band connected") { await d.state(T.id, T.band) == "connected" }
        let band = try #require(await d.daemon.peripheralID(for: T.band))
        let unknown = PeripheralID()
        let named: [PeripheralRef] = [.id(unknown), .address(T.band), .id(band), .address(T.address(9))]
        let mine = try await d.api(.retrievePeripherals(T.id, named), as: Self.alice)
        #expect(Self.addresses(mine) == [T.band.string], "the unknown left out, the band once")
        #expect(Self.entries(mine).first?["connected"] == .boolean(true))

        try await d.submit(.register(Self.bobs, uid: Self.bob.uid))
        let bobs = try await d.api(.retrievePeripherals(Self.bobs, [.id(band), .address(T.band)]), as: Self.bob)
        #expect(Self.entries(bobs).isEmpty, "alice's peripheral answers as an unknown one")
        let connected = try await d.api(.retrieveConnectedPeripherals(Self.bobs, [T.heartRate]), as: Self.bob)
        #expect(Self.addresses(connected) == [T.band.string], "bob names the service: he learns of the connected band")
        let now = try await d.api(.retrievePeripherals(Self.bobs, [.id(band)]), as: Self.bob)
        #expect(Self.addresses(now) == [T.band.string], "and may name it from then on")
        await d.stop()
    }

    @Test func retrieveConnectedWithoutAServiceIsInvalid() async throws {
        let d = try await InProcessDaemon(fake: FakeBlueZ(), directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(T.id, uid: 0))
        do {
            _ = try await d.api(.retrieveConnectedPeripherals(T.id, []))
            Issue.record("an empty service list was accepted")
        } catch let error as RelinkError {
            #expect(error.code == .invalidArguments, "\(error)")
        }
        await d.stop()
    }
}
