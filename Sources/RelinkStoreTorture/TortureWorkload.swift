import Foundation
public import RelinkStore
import RelinkModel

/// A seeded, deterministic stream of multi-row mutations over the store.
///
/// Mutation `i` depends only on the seed and on the model state after
/// mutations `0..<i`, so a writer started at index N and a checker that
/// replays the stream agree exactly. Each mutation touches several tables in
/// one transaction (identifier + peripheral + scan + connection +
/// subscriptions + event, or events + connection update, ...), so a
/// half-applied mutation shows as a state equal to no model state.
public struct TortureWorkload: Sendable {
    public let seed: UInt64
    /// The model after `count` mutations.
    public private(set) var model = TortureModel()
    /// How many mutations the model has applied.
    public private(set) var count = 0

    public init(seed: UInt64) { self.seed = seed }

    /// Advances the model to `count` mutations (it only moves forward).
    public mutating func advance(to target: Int) {
        while count < target { _ = step() }
    }

    /// The next mutation list; the model applies it as well.
    public mutating func step() -> [StoreMutation] {
        let mutations = Self.mutations(index: count, seed: seed, model: model)
        model.apply(mutations)
        count += 1
        return mutations
    }

    /// Base time of the stream; mutation `i` happens at base + i seconds.
    static let base = Date(timeIntervalSince1970: 1_790_000_000)

    static func mutations(index i: Int, seed: UInt64, model: TortureModel) -> [StoreMutation] {
        var rng = SplitMix64(seed: seed ^ (UInt64(i) &* 0xD1B5_4A32_D192_ED03))
        let live = model.liveIdentifiers
        let roll = Int(rng.next() % 100)
        let now = base.addingTimeInterval(Double(i))
        guard !live.isEmpty, roll >= 30 else { return create(i, now: now, rng: &rng) }
        let target = live[Int(rng.next() % UInt64(live.count))]
        guard let entry = model.identifiers[target], let peripheralID = entry.connections.keys.first else {
            return [.removeIdentifier(target)]
        }
        switch roll {
        case ..<55: return events(i, target: target, intent: entry.connections[peripheralID], now: now)
        case ..<65: return [.acknowledgeEvents(target, through: max(0, entry.nextSequence - 1 - Int64(i % 3)))]
        case ..<75: return resubscribe(i, entry: entry, peripheral: peripheralID, now: now)
        case ..<90: return [.removeIdentifier(target), .removePeripheral(peripheralID)]
        default: return rename(i, record: model.peripherals[peripheralID], now: now)
        }
    }

    static func uuid16(_ value: Int) -> BluetoothUUID {
        // Four lowercase hex digits are always a valid 16-bit UUID.
        BluetoothUUID(shortValue: UInt32(value & 0xFFFF))
    }

    private static func create(_ i: Int, now: Date, rng: inout SplitMix64) -> [StoreMutation] {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: rng.next()) }
        let peripheral = PeripheralID(UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                     bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])))
        let octets = [0xC0, 0x01, (i >> 24) & 0xFF, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF].map { String(format: "%02X", $0) }
        guard let id = try? RestoreIdentifier("t\(i)"),
              let record = try? RestoreIdentifierRecord(id: id, ownerUID: UInt32(i % 5000), outboxLimit: 6, createdAt: now),
              let address = try? DeviceAddress(adapter: "hci0", address: octets.joined(separator: ":"), addressType: "random"),
              let device = try? PeripheralRecord(id: peripheral, address: address, serviceUUIDs: [uuid16(0x1800 + i % 16)], createdAt: now),
              let intent = try? ConnectionIntent(identifier: id, peripheral: peripheral,
                                                 overallTimeout: i % 2 == 0 ? nil : .seconds(30), requestedAt: now),
              let event = try? OutboxEventDraft(identifier: id, kind: "created", payload: Data("\(i)".utf8), createdAt: now)
        else { return [] }
        return [
            .putIdentifier(record), .putPeripheral(device),
            .putScanIntent(id, ScanIntent(services: [uuid16(i)], allowDuplicates: i % 2 == 0)),
            .putConnectionIntent(intent),
            .addSubscription(Subscription(identifier: id, peripheral: peripheral,
                                          characteristic: CharacteristicKey(service: uuid16(0x180D), characteristic: uuid16(0x2A37)))),
            .addSubscription(Subscription(identifier: id, peripheral: peripheral,
                                          characteristic: CharacteristicKey(service: uuid16(0x180D), characteristic: uuid16(0x2A00 + i % 64)))),
            .appendEvent(event),
        ]
    }

    private static func events(_ i: Int, target: RestoreIdentifier, intent: ConnectionIntent?, now: Date) -> [StoreMutation] {
        var result: [StoreMutation] = (0..<3).compactMap { k in
            (try? OutboxEventDraft(identifier: target, kind: "value", payload: Data("\(i):\(k)".utf8), createdAt: now)).map { .appendEvent($0) }
        }
        if var intent {
            intent.attempts += 1
            intent.state = [.pending, .connecting, .connected][i % 3]
            intent.lastErrorClass = "timeout"
            intent.lastErrorMessage = "m\(i)"
            result.append(.putConnectionIntent(intent))
        }
        return result
    }

    private static func resubscribe(_ i: Int, entry: TortureModel.Identifier, peripheral: PeripheralID, now: Date) -> [StoreMutation] {
        var result: [StoreMutation] = []
        if let first = entry.subscriptions.values.sorted().first { result.append(.removeSubscription(first)) }
        result.append(.addSubscription(Subscription(identifier: entry.record.id, peripheral: peripheral,
                                                    characteristic: CharacteristicKey(service: uuid16(0x180F), characteristic: uuid16(0x3000 + i % 4096)))))
        if var scan = entry.scan {
            scan.services.insert(uuid16(0x4000 + i % 4096))
            result.append(.putScanIntent(entry.record.id, scan))
        }
        return result
    }

    private static func rename(_ i: Int, record: PeripheralRecord?, now: Date) -> [StoreMutation] {
        guard var record else { return [] }
        record.advertisingName = .init("adv-\(i)", seenAt: now)
        if i % 2 == 0 { record.gapName = .init("gap-\(i)", seenAt: now) }
        record.lastSeenAt = now
        record.serviceUUIDs.append(uuid16(0x5000 + i % 4096))
        return [.putPeripheral(record)]
    }
}
