import Foundation
import Testing
@testable import Restoration
import RelinkModel

@Suite("Scan coordinator")
struct ScanCoordinatorTests {
    let lockScan = ScanClient.identifier(Fixtures.lockIdentifier)
    let bandScan = ScanClient.identifier(Fixtures.bandIdentifier)
    let connectionScan = ScanClient.connection(Fixtures.lockIntent)
    let lock = Fixtures.lockAddress
    let band = Fixtures.otherAddress

    @Test func filtersAreMergedAndStoppedWhenNothingNeedsThem() {
        var coordinator = ScanCoordinator()
        #expect(coordinator.register(ScanIntent(services: [Fixtures.lockService]), for: lockScan) == .start(DiscoveryFilter(services: [Fixtures.lockService])))
        #expect(coordinator.register(ScanIntent(services: [Fixtures.lockService]), for: connectionScan) == nil, "same filter: nothing to change")
        #expect(coordinator.register(ScanIntent(services: [Fixtures.heartRate], allowDuplicates: true), for: bandScan)
            == .update(DiscoveryFilter(services: [Fixtures.lockService, Fixtures.heartRate], duplicateData: true)))
        #expect(coordinator.unregister(bandScan) == .update(DiscoveryFilter(services: [Fixtures.lockService])))
        #expect(coordinator.unregister(lockScan) == nil)
        #expect(coordinator.isScanning)
        #expect(coordinator.unregister(connectionScan) == .stop)
        #expect(!coordinator.isScanning)
        #expect(coordinator.unregister(connectionScan) == nil)
    }

    /// The coordinator keeps the merged filter as counts (start-up registers
    /// thousands of scans one by one); after any sequence of registrations,
    /// replacements and removals it must equal a merge of the intents left.
    @Test func theKeptFilterAlwaysEqualsAFreshMerge() {
        // A fixed-seed linear congruential generator: the same sequence every run.
        var state: UInt64 = 6
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let services = [Fixtures.lockService, Fixtures.heartRate, Fixtures.uuid("180F"), Fixtures.uuid("1812")]
        let clients = (0..<40).map { ScanClient.connection(ConnectionIntentID(identifier: Fixtures.lockIdentifier, peripheral: PeripheralID(UUIDFixture.make($0)))) }
        var coordinator = ScanCoordinator()
        var changes = 0
        for step in 0..<3000 {
            let client = clients[Int(next() % UInt64(clients.count))]
            if next() % 3 == 0 {
                _ = coordinator.unregister(client)
            } else {
                let chosen = Set(services.filter { _ in next() % 2 == 0 })
                let rssi: Int16? = next() % 3 == 0 ? nil : -Int16(next() % 100)
                let intent = ScanIntent(services: chosen, allowDuplicates: next() % 5 == 0, minimumRSSI: rssi, lowDuty: next() % 2 == 0)
                if coordinator.register(intent, for: client) != nil { changes += 1 }
            }
            let expected = DiscoveryFilter.merging(coordinator.intents.values)
            guard coordinator.filter == expected else {
                Issue.record("step \(step): kept \(String(describing: coordinator.filter)), merged \(String(describing: expected))")
                return
            }
        }
        #expect(changes > 20, "the sequence should change the filter often (\(changes))")
    }

    @Test func anIntentWithoutUUIDsMeansAll() {
        let merged = DiscoveryFilter.merging([ScanIntent(services: [Fixtures.lockService]), ScanIntent()])
        #expect(merged?.services == [])
        #expect(DiscoveryFilter.merging([ScanIntent]()) == nil)
    }

    @Test func rssiAndDutyAreMergedConservatively() {
        let both = DiscoveryFilter.merging([ScanIntent(minimumRSSI: -60, lowDuty: true), ScanIntent(minimumRSSI: -80, lowDuty: true)])
        #expect(both?.minimumRSSI == -80)
        #expect(both?.lowDuty == true)
        let mixed = DiscoveryFilter.merging([ScanIntent(minimumRSSI: -60, lowDuty: true), ScanIntent()])
        #expect(mixed?.minimumRSSI == nil)
        #expect(mixed?.lowDuty == false, "one foreground scan makes the whole scan active")
    }

    @Test func duplicatesAreCoalescedPerPeripheralPerClient() {
        var coordinator = ScanCoordinator()
        _ = coordinator.register(ScanIntent(services: [Fixtures.lockService]), for: lockScan)
        _ = coordinator.register(ScanIntent(allowDuplicates: true), for: bandScan)
        let advert = Advertisement(address: lock, serviceUUIDs: [Fixtures.lockService], rssi: -50)
        #expect(coordinator.deliver(advert) == [bandScan, lockScan], "identifiers in order: band before lock")
        #expect(coordinator.deliver(advert) == [bandScan], "the lock scan had this peripheral already")
        #expect(coordinator.deliver(advert) == [bandScan])
        let other = Advertisement(address: band, serviceUUIDs: [Fixtures.heartRate])
        #expect(coordinator.deliver(other) == [bandScan], "not a lock service")
        let secondLock = Advertisement(address: band, serviceUUIDs: [Fixtures.lockService])
        #expect(coordinator.deliver(secondLock).contains(lockScan), "another peripheral is a new discovery")
    }

    @Test func aNewSessionDeliversAgain() {
        var coordinator = ScanCoordinator()
        let advert = Advertisement(address: lock)
        _ = coordinator.register(ScanIntent(), for: lockScan)
        #expect(coordinator.deliver(advert) == [lockScan])
        #expect(coordinator.deliver(advert).isEmpty)
        _ = coordinator.register(ScanIntent(), for: lockScan)
        #expect(coordinator.deliver(advert).isEmpty, "re-registering the same intent is the same session")
        #expect(coordinator.restart() == .start(DiscoveryFilter()))
        #expect(coordinator.deliver(advert) == [lockScan], "after bluetoothd or power cycle discovery starts over")
        _ = coordinator.unregister(lockScan)
        _ = coordinator.register(ScanIntent(), for: lockScan)
        #expect(coordinator.deliver(advert) == [lockScan])
    }

    @Test func coalescingMemoryIsBounded() throws {
        var coordinator = ScanCoordinator(seenLimit: 100)
        _ = coordinator.register(ScanIntent(), for: lockScan)
        for index in 0 ..< 10_000 {
            let octets: [UInt8] = [0x40, 0, 0, 0, UInt8(index >> 8), UInt8(index & 0xFF)]
            let advert = Advertisement(address: try BluetoothAddress(octets: octets, kind: .random))
            #expect(coordinator.deliver(advert) == [lockScan])
        }
        #expect(coordinator.rememberedCount(for: lockScan) == 100)
    }

    @Test func rssiLimitIsApplied() {
        var coordinator = ScanCoordinator()
        _ = coordinator.register(ScanIntent(minimumRSSI: -70), for: lockScan)
        #expect(coordinator.deliver(Advertisement(address: lock, rssi: -90)).isEmpty)
        #expect(coordinator.deliver(Advertisement(address: lock, rssi: -60)) == [lockScan])
    }
}

enum UUIDFixture {
    static func make(_ n: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-4000-8000-%012x", n)) ?? UUID()
    }
}
