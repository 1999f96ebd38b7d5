import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// Advertising data in `discovered` events, scans filtered by data
/// prefixes, and what a changed payload does (issue 22 item 3), against
/// the fake bluetoothd.
@Suite("Daemon in-process: advertising data")
struct AdvertisingDataEventTests {
    static func address(_ last: UInt8) -> BluetoothAddress {
        (try? BluetoothAddress(octets: [0, 0, 0, 0, 0, last])) ?? { fatalError("six octets") }()
    }
    static let lockAddress = address(2), bandAddress = address(3), beaconAddress = address(4)
    static let id = (try? RestoreIdentifier("beacons")) ?? { fatalError("valid") }()
    static let eddystone = BluetoothUUID(shortValue: 0xFEAA)
    static let beaconUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID()
    static let iBeacon = IBeacon(proximityUUID: beaconUUID, major: 7, minor: 42, measuredPower: -59)

    static func beaconData(minor: UInt16 = 42) -> AdvertisingData {
        var beacon = iBeacon
        beacon.minor = minor
        return AdvertisingData(manufacturerData: [IBeacon.companyID: beacon.frame], serviceData: [eddystone: [0x20, 0x00]],
                               txPower: -8, appearance: 0x0200, flags: [0x04], raw: [0x0A: [0xF8]])
    }

    /// A lock, a band and a broadcast-only beacon, all in range.
    static func world() async -> FakeBlueZ {
        let fake = FakeBlueZ()
        var lock = FakePeripheral(address: lockAddress, advertisedName: "RLK-7F3A", services: [])
        lock.advertisingData = AdvertisingData(manufacturerData: [0xFFFF: Array("RL\u{1}".utf8)])
        var band = FakePeripheral(address: bandAddress, advertisedName: "HRM-2C41", services: [])
        band.advertisingData = AdvertisingData(serviceData: [BluetoothUUID(shortValue: 0x180D): [1]])
        var beacon = FakePeripheral(address: beaconAddress)
        beacon.advertisingData = beaconData()
        for p in [lock, band, beacon] { await fake.add(p) }
        return fake
    }

    static func discoveries(_ d: InProcessDaemon) async throws -> [Advertisement] {
        try await d.events(id).compactMap { if case .discovered(_, let ad)? = $0.payload { ad } else { nil } }
    }

    @Test func aBeaconsFrameReachesTheEventWholeAndDecodes() async throws {
        let fake = await Self.world()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(Self.id, uid: 0))
        try await d.submit(.scan(Self.id, ScanIntent()))
        try await eventually("the beacon discovered") { try await Self.discoveries(d).contains { $0.address == Self.beaconAddress } }
        let ad = try #require(try await Self.discoveries(d).first { $0.address == Self.beaconAddress })
        #expect(ad.data == Self.beaconData())
        #expect(IBeacon(ad.data) == Self.iBeacon)
        await d.stop()
    }

    @Test func aScanFilteredByAManufacturerPrefixFindsTheBeaconOnly() async throws {
        let fake = await Self.world()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(Self.id, uid: 0))
        try await d.submit(.scan(Self.id, ScanIntent(dataPrefixes: [IBeacon.scanPrefix])))
        try await eventually("the beacon discovered") { try await Self.discoveries(d).contains { $0.address == Self.beaconAddress } }
        // Every peripheral reports again; only the beacon is news to this scan.
        for a in [Self.lockAddress, Self.bandAddress, Self.beaconAddress] { await fake.advertiseAgain(a) }
        await fake.setAdvertisingData(Self.beaconAddress, Self.beaconData(minor: 43))
        try await eventually("the changed beacon discovered") { try await Self.discoveries(d).count == 2 }
        #expect(try await Self.discoveries(d).map(\.address) == [Self.beaconAddress, Self.beaconAddress])
        await d.stop()
    }

    @Test func withoutDuplicatesAChangedPayloadIsNewsAndTheSamePayloadIsNot() async throws {
        let fake = await Self.world()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(Self.id, uid: 0))
        try await d.submit(.scan(Self.id, ScanIntent(dataPrefixes: [IBeacon.scanPrefix])))
        try await eventually("the beacon discovered") { try await Self.discoveries(d).count == 1 }
        await fake.advertiseAgain(Self.beaconAddress)
        await fake.advertiseAgain(Self.beaconAddress)
        await fake.setAdvertisingData(Self.beaconAddress, Self.beaconData(minor: 43))
        try await eventually("the changed payload discovered") { try await Self.discoveries(d).count >= 2 }
        let minors = try await Self.discoveries(d).compactMap { IBeacon($0.data)?.minor }
        #expect(minors == [42, 43], "the same payload again is no event; a changed one is")
        await d.stop()
    }

    @Test func withDuplicatesEveryReportIsAnEventAtTheSameRSSI() async throws {
        let fake = await Self.world()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(Self.id, uid: 0))
        try await d.submit(.scan(Self.id, ScanIntent(allowDuplicates: true, dataPrefixes: [IBeacon.scanPrefix])))
        try await eventually("the beacon discovered") { try await Self.discoveries(d).count == 1 }
        await fake.setAdvertisingData(Self.beaconAddress, Self.beaconData(minor: 43))
        await fake.advertiseAgain(Self.beaconAddress)
        try await eventually("both reports discovered") { try await Self.discoveries(d).count >= 3 }
        let found = try await Self.discoveries(d)
        #expect(found.compactMap { IBeacon($0.data)?.minor } == [42, 43, 43], "one event per report: \(found)")
        #expect(Set(found.map(\.rssi)).count == 1, "at the same RSSI")
        await d.stop()
    }

    @Test func aScansPrefixesSurviveARestart() async throws {
        let fake = await Self.world()
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await first.submit(.register(Self.id, uid: 0))
        let scan = ScanIntent(dataPrefixes: [IBeacon.scanPrefix, try AdvertisingDataPrefix(parsing: "service:feaa:20")])
        try await first.submit(.scan(Self.id, scan))
        try await eventually("the beacon discovered") { try await Self.discoveries(first).count == 1 }
        await first.stop()
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        #expect(await second.daemon.core.scanIntents[Self.id] == scan)
        await fake.setAdvertisingData(Self.beaconAddress, Self.beaconData(minor: 44))
        await fake.advertiseAgain(Self.lockAddress)
        try await eventually("the beacon discovered after the restart") {
            try await Self.discoveries(second).contains { IBeacon($0.data)?.minor == 44 }
        }
        #expect(try await !Self.discoveries(second).contains { $0.address != Self.beaconAddress }, "still filtered after the restart")
        await second.stop()
    }

    /// A match rule's data prefixes find a peripheral whose address changed
    /// (the connection intent's stored address is one nothing has), also
    /// after a restart: the rule is stored with the intent. A rule whose
    /// prefix the lock's data does not start with takes nothing.
    @Test func aMatchRulesDataPrefixFindsAChangedAddressAlsoAfterARestart() async throws {
        let fake = await Self.world()
        let directory = try InProcessDaemon.temporaryDirectory()
        let old = Self.address(0x99)
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await first.submit(.register(Self.id, uid: 0))
        let wrong = MatchRule(dataPrefixes: [try AdvertisingDataPrefix(parsing: "manufacturer:ffff:524c02")])
        try await first.submit(.connect(Self.id, old, try ConnectionOptions(strategies: [.scan], deadline: .after(.seconds(2)), match: wrong)))
        try await eventually("the intent with the wrong prefix gave up") { try await first.events(Self.id).contains { $0.kind == "failed-to-connect" } }
        #expect(await !fake.isConnected(Self.lockAddress), "a prefix the data does not start with took the lock")
        try await first.submit(.cancel(Self.id, old))
        let rule = MatchRule(dataPrefixes: [try AdvertisingDataPrefix(parsing: "manufacturer:ffff:524c01")])
        await fake.setInRange(Self.lockAddress, false)
        try await first.submit(.connect(Self.id, old, try ConnectionOptions(strategies: [.scan], deadline: .pendingUntilCancelled, match: rule)))
        await first.stop()
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        await fake.setInRange(Self.lockAddress, true)
        try await eventually("the lock found by the rule's prefix at its new address") {
            try await second.events(Self.id).contains { $0.kind == "connected" }
        }
        #expect(await fake.isConnected(Self.lockAddress))
        await second.stop()
    }
}
