import Foundation
import RelinkStore
import RelinkModel

/// Fills a store with the benchmark's population: identifiers, each with a
/// scan, `perIdentifier` peripherals with a connection intent and a
/// subscription each, and a few outbox events.
struct BenchPopulation {
    let identifiers: Int
    let perIdentifier: Int
    let eventsPerIdentifier: Int

    static let base = Date(timeIntervalSince1970: 1_790_000_000)

    func fill(_ store: RelinkStore) async throws {
        var serial = 0
        for i in 0..<identifiers {
            let id = try RestoreIdentifier("bench.client-\(i)")
            var mutations: [StoreMutation] = [
                .putIdentifier(try RestoreIdentifierRecord(id: id, ownerUID: UInt32(1000 + i % 10), createdAt: Self.base)),
                .putScanIntent(id, ScanIntent(services: [BluetoothUUID(shortValue: 0x180D), BluetoothUUID(shortValue: 0xFE59)],
                                              allowDuplicates: i % 2 == 0)),
            ]
            for _ in 0..<perIdentifier {
                let address = try DeviceAddress(adapter: "hci0", address: String(format: "C0:00:00:%02X:%02X:%02X", serial >> 16 & 0xFF, serial >> 8 & 0xFF, serial & 0xFF), addressType: "random")
                serial += 1
                let peripheral = try PeripheralRecord(
                    id: PeripheralID(), address: address, advertisingName: .init("Device \(serial)", seenAt: Self.base),
                    gapName: .init("GAP \(serial)", seenAt: Self.base), serviceUUIDs: [BluetoothUUID(shortValue: 0x180D)],
                    lastSeenAt: Self.base, createdAt: Self.base)
                mutations.append(.putPeripheral(peripheral))
                mutations.append(.putConnectionIntent(try ConnectionIntent(identifier: id, peripheral: peripheral.id, requestedAt: Self.base)))
                mutations.append(.addSubscription(Subscription(
                    identifier: id, peripheral: peripheral.id,
                    characteristic: CharacteristicKey(service: BluetoothUUID(shortValue: 0x180D), characteristic: BluetoothUUID(shortValue: 0x2A37)))))
            }
            for n in 0..<eventsPerIdentifier {
                mutations.append(.appendEvent(try OutboxEventDraft(identifier: id, kind: "value-notified",
                                                                   payload: Data("{\"n\":\(n),\"value\":\"00ff\"}".utf8), createdAt: Self.base)))
            }
            try await store.apply(mutations)
        }
    }
}
