import Foundation
@testable import RelinkStore
import Testing
import RelinkModel

@Suite("Record round trips")
struct RecordRoundTripTests {
    private func withStore(_ body: (RelinkStore) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        try await body(store)
    }

    @Test("identifier, scan, connection intent, subscription and peripheral read back equal, also after reopening")
    func fullRoundTrip() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let id = try Fixtures.id("org.example.lock")
        let record = try RestoreIdentifierRecord(id: id, ownerUID: 4242, namePreference: .advertising, outboxLimit: 50, createdAt: Fixtures.now)
        let address = try DeviceAddress(adapter: "hci1", address: "c0:ff:ee:00:11:22", addressType: "random")
        let peripheral = try PeripheralRecord(
            id: PeripheralID(), address: address,
            advertisingName: .init("Lock-ad", seenAt: Fixtures.now.addingTimeInterval(1.0005)),
            gapName: .init("Front door", seenAt: Fixtures.now.addingTimeInterval(2)), alias: "door",
            serviceUUIDs: [BluetoothUUID(parsing: "180a"), BluetoothUUID(parsing: "0000fe59-0000-1000-8000-00805F9B34FB")],
            lastSeenAt: Fixtures.now.addingTimeInterval(3), createdAt: Fixtures.now)
        let scan = ScanIntent(services: [try BluetoothUUID(parsing: "fe59")], allowDuplicates: true)
        let intent = try ConnectionIntent(identifier: id, peripheral: peripheral.id, state: .connecting, stepTimeout: .milliseconds(5500),
                                          overallTimeout: nil, strategies: [.scan, .knownIdentifier], requestedAt: Fixtures.now,
                                          attempts: 7, lastErrorClass: "page-timeout", lastErrorMessage: "le-connection-abort-by-local",
                                          matchName: "Lock-ad ✓", matchManufacturerID: 0xFFFF,
                                          matchServices: [try BluetoothUUID(parsing: "fe59"), try BluetoothUUID(parsing: "180a")],
                                          pairOnDemand: false, bond: IntentBond(bonded: true, identityAddress: true), pairingCapability: .keyboardDisplay)
        let subscription = Subscription(identifier: id, peripheral: peripheral.id, characteristic: CharacteristicKey(service: try BluetoothUUID(parsing: "fe59"), characteristic: try BluetoothUUID(parsing: "8ec90001-f315-4f60-9fb8-838830daea50")))
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        try await store.apply([.putIdentifier(record), .putPeripheral(peripheral), .putScanIntent(id, scan),
                               .putConnectionIntent(intent), .addSubscription(subscription)])
        let expected = StoredState(
            identifiers: [.init(record: record, scan: scan, connections: [intent], subscriptions: [subscription],
                                outbox: OutboxStatus(nextSequence: 1, pendingCount: 0, droppedTotal: 0, droppedRange: nil))],
            peripherals: [peripheral])
        #expect(try await store.loadState() == expected)
        #expect(try await store.peripheral(at: address) == peripheral)
        try store.close()
        let reopened = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? reopened.close() }
        #expect(try await reopened.loadState() == expected)
        #expect(intent.deadline == nil)
    }

    @Test("the adapter status last announced reads back per adapter, replaced by the next one, also after reopening")
    func adapterStateRoundTrip() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        #expect(try await store.loadState().adapterStates.isEmpty)
        try await store.apply([.putAdapterState(adapter: "hci0", AdapterStatus(.poweredOn, roles: [.peripheral, .central]))])
        try await store.apply([.putAdapterState(adapter: "hci0", AdapterStatus(.blocked, roles: [.central, .centralPeripheral])),
                               .putAdapterState(adapter: "hci1", AdapterStatus(.missing))])
        let expected: [String: AdapterStatus] = [
            "hci0": AdapterStatus(.blocked, roles: [.central, .centralPeripheral]), "hci1": AdapterStatus(.missing),
        ]
        #expect(try await store.loadState().adapterStates == expected)
        try store.close()
        let reopened = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? reopened.close() }
        #expect(try await reopened.loadState().adapterStates == expected)
    }

    @Test("updates replace, removals cascade, putIdentifier keeps createdAt")
    func updatesAndCascades() async throws {
        try await withStore { store in
            let id = try Fixtures.id("band")
            let peripheral = try Fixtures.peripheral(1)
            let intent = try ConnectionIntent(identifier: id, peripheral: peripheral.id, overallTimeout: .seconds(30), requestedAt: Fixtures.now)
            try await store.apply([.putIdentifier(Fixtures.identifier("band")), .putPeripheral(peripheral), .putConnectionIntent(intent),
                                   .addSubscription(Subscription(identifier: id, peripheral: peripheral.id, characteristic: CharacteristicKey(service: BluetoothUUID(parsing: "180d"), characteristic: BluetoothUUID(parsing: "2a37"))))])
            var updated = try RestoreIdentifierRecord(id: id, ownerUID: 7, outboxLimit: 10, createdAt: Fixtures.now.addingTimeInterval(99))
            try await store.apply([.putIdentifier(updated)])
            updated.createdAt = Fixtures.now
            #expect(try await store.loadState().identifiers.first?.record == updated)
            #expect(intent.deadline == Fixtures.now.addingTimeInterval(30))

            try await store.apply([.removePeripheral(peripheral.id)])
            let afterForget = try await store.loadState()
            #expect(afterForget.peripherals.isEmpty)
            #expect(afterForget.identifiers.first?.connections == [])
            #expect(afterForget.identifiers.first?.subscriptions == [])

            try await store.apply([.removeIdentifier(id)])
            #expect(try await store.loadState() == StoredState(identifiers: [], peripherals: []))
        }
    }

    @Test("bad requests get typed errors and change nothing")
    func requestErrors() async throws {
        try await withStore { store in
            let id = try Fixtures.id("lock")
            let first = try Fixtures.peripheral(1)
            try await store.apply([.putIdentifier(Fixtures.identifier("lock")), .putPeripheral(first)])
            let before = try await store.loadState()

            let clash = try PeripheralRecord(id: PeripheralID(), address: first.address, createdAt: Fixtures.now)
            await #expect(throws: StoreError.addressInUse(first.address)) {
                try await store.apply([.putIdentifier(Fixtures.identifier("other")), .putPeripheral(clash)])
            }
            let ghost = PeripheralID()
            await #expect(throws: StoreError.unknownPeripheral(ghost.uuid.uuidString.lowercased())) {
                try await store.apply([.putConnectionIntent(ConnectionIntent(identifier: id, peripheral: ghost, requestedAt: Fixtures.now))])
            }
            let stranger = try Fixtures.id("stranger")
            await #expect(throws: StoreError.unknownIdentifier(stranger)) {
                try await store.apply([.putScanIntent(stranger, ScanIntent(services: [], allowDuplicates: false))])
            }
            #expect(try await store.loadState() == before)
        }
    }

    @Test("store records check their own rules")
    func normalisation() throws {
        #expect(throws: StoreError.self) { try RestoreIdentifierRecord(id: RestoreIdentifier("x"), ownerUID: 0, outboxLimit: 0, createdAt: Fixtures.now) }
        #expect(throws: StoreError.self) {
            try ConnectionIntent(identifier: RestoreIdentifier("x"), peripheral: PeripheralID(), strategies: [.scan, .scan], requestedAt: Fixtures.now)
        }
        #expect(throws: StoreError.self) {
            try ConnectionIntent(identifier: RestoreIdentifier("x"), peripheral: PeripheralID(), stepTimeout: .zero, requestedAt: Fixtures.now)
        }
        #expect(throws: StoreError.self) {
            try OutboxEventDraft(identifier: RestoreIdentifier("x"), kind: "k", payload: Data(count: OutboxEvent.maximumPayloadBytes + 1), createdAt: Fixtures.now)
        }
    }
}
