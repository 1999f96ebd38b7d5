import Foundation
import RelinkStore
import Restoration
import RelinkModel

/// Converts between the store's rows and the restoration core's values.
///
/// The store keeps less than the core's ``ConnectionIntentRecord``: the
/// intent's address and wanted services live on the peripheral row, step
/// timeouts are the core's defaults, and the core's `idle` and `failed`
/// phases are kept as a `pending` row with `lastErrorClass` `idle` or
/// `failed.<class>` (so a restart does not resume them).
enum StoreMapping {
    /// The highest event bound an identifier may ask for (`event_limit`).
    static let maximumEventLimit = RestoreIdentifierRecord.maximumOutboxLimit

    /// Marker in `lastErrorClass` for an intent that went idle.
    static let idleMarker = "idle"
    /// Prefix in `lastErrorClass` for an intent that gave up.
    static let failedPrefix = "failed."

    /// The store row for a core record.
    /// - Throws: ``ControlError`` when the store rejects a value.
    static func storeIntent(_ record: ConnectionIntentRecord) throws(ControlError) -> ConnectionIntent {
        var state: ConnectionIntent.State = .pending
        var errorClass: String?
        var message: String?
        switch record.phase {
        case .pending, .cancelled: state = .pending
        case .connected: state = .connected
        case .idle: errorClass = idleMarker
        case .failed(let failure):
            errorClass = failedPrefix + failure.failureClass.rawValue
            message = "\(failure.errorName): \(failure.message)"
        }
        var overall: Duration?
        if case .after(let limit) = record.options.deadline { overall = limit }
        do {
            return try ConnectionIntent(
                identifier: record.intent.identifier, peripheral: record.intent.peripheral,
                state: state, overallTimeout: overall,
                strategies: record.options.strategies, requestedAt: Date(),
                lastErrorClass: errorClass, lastErrorMessage: message,
                matchName: record.options.match.localName, matchManufacturerID: record.options.match.manufacturerID,
                matchServices: record.options.match.services.sorted())
        } catch let error as ControlError {
            throw error
        } catch {
            throw .failed("cannot store the connection intent: \(error)")
        }
    }

    /// The core record for a stored intent and its peripheral row.
    /// - Throws: ``DomainError`` for values the core rejects.
    static func coreRecord(_ row: ConnectionIntent, peripheral: PeripheralRecord?) throws(DomainError) -> ConnectionIntentRecord {
        var deadline = ConnectionDeadline.pendingUntilCancelled
        if let overall = row.overallTimeout { deadline = .after(overall) }
        let services = Set(peripheral?.serviceUUIDs ?? [])
        let match = MatchRule(services: Set(row.matchServices), localName: row.matchName, manufacturerID: row.matchManufacturerID)
        let options = try ConnectionOptions(strategies: row.strategies, deadline: deadline, services: services, match: match)
        var phase: ConnectionIntentRecord.Phase = row.state == .connected ? .connected : .pending
        if row.lastErrorClass == idleMarker {
            phase = .idle
        } else if let marker = row.lastErrorClass, marker.hasPrefix(failedPrefix) {
            let failureClass = FailureClass(rawValue: String(marker.dropFirst(failedPrefix.count))) ?? .unknown
            phase = .failed(ConnectionFailure(failureClass, errorName: "org.relink.Error.Failed", message: row.lastErrorMessage ?? ""))
        }
        return ConnectionIntentRecord(
            intent: ConnectionIntentID(identifier: row.identifier, peripheral: row.peripheral),
            options: options, address: peripheral?.address.address, phase: phase)
    }

    /// The store's address of a core address on an adapter.
    /// - Throws: ``ControlError``.
    static func deviceAddress(_ address: BluetoothAddress, adapter: String) throws(ControlError) -> DeviceAddress {
        do {
            return try DeviceAddress(adapter: adapter, address: address)
        } catch {
            throw .invalidArguments("\(error)")
        }
    }

    /// An outbox draft for an event: kind is the event's name, payload its
    /// JSON (``payload(_:)``).
    /// - Throws: ``ControlError/failed(_:)`` when it cannot be encoded.
    static func draft(_ event: RelinkEvent, for id: RestoreIdentifier) throws(ControlError) -> OutboxEventDraft {
        try draft(event, payload: payload(event), for: id)
    }

    /// An outbox draft for an event whose payload is already encoded (one
    /// encoding for every identifier the event goes to).
    static func draft(_ event: RelinkEvent, payload: Data, for id: RestoreIdentifier) throws(ControlError) -> OutboxEventDraft {
        do {
            return try OutboxEventDraft(identifier: id, kind: event.name, payload: payload, createdAt: Date())
        } catch let error as ControlError {
            throw error
        } catch {
            throw .failed("cannot encode event \(event.name): \(error)")
        }
    }

    /// An event's JSON: `JSONEncoder` with sorted keys, except for
    /// `value-notified`, the one event that comes as fast as a peripheral
    /// sends, whose bytes ``valueNotifiedPayload(peripheral:characteristic:value:)``
    /// writes directly (the same bytes, checked against `JSONEncoder` by
    /// `MappingTests`, at a fraction of the cost).
    /// - Throws: ``ControlError/failed(_:)`` when it cannot be encoded.
    static func payload(_ event: RelinkEvent) throws(ControlError) -> Data {
        if case .valueNotified(let peripheral, let characteristic, let value) = event {
            return valueNotifiedPayload(peripheral: peripheral, characteristic: characteristic, value: value)
        }
        return try encodedPayload(event)
    }

    /// An event's JSON by `JSONEncoder` (sorted keys, compact).
    /// - Throws: ``ControlError/failed(_:)`` when it cannot be encoded.
    static func encodedPayload(_ event: RelinkEvent) throws(ControlError) -> Data {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return try encoder.encode(event)
        } catch {
            throw .failed("cannot encode event \(event.name): \(error)")
        }
    }

    /// `{"valueNotified":{"characteristic":{"characteristic":C,"service":S},"peripheral":{"uuid":P},"value":[...]}}`,
    /// byte for byte what `JSONEncoder` with sorted keys writes for the event.
    static func valueNotifiedPayload(peripheral: PeripheralID, characteristic: CharacteristicKey, value: [UInt8]) -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(170 + value.count * 4)
        out.append(contentsOf: #"{"valueNotified":{"characteristic":{"characteristic":""#.utf8)
        appendUUID(characteristic.characteristic, to: &out)
        out.append(contentsOf: #"","service":""#.utf8)
        appendUUID(characteristic.service, to: &out)
        out.append(contentsOf: #""},"peripheral":{"uuid":""#.utf8)
        appendUUID(peripheral.uuid, to: &out)
        out.append(contentsOf: #""},"value":["#.utf8)
        for (index, byte) in value.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            if byte >= 100 { out.append(UInt8(ascii: "0") + byte / 100) }
            if byte >= 10 { out.append(UInt8(ascii: "0") + byte / 10 % 10) }
            out.append(UInt8(ascii: "0") + byte % 10)
        }
        out.append(contentsOf: "]}}".utf8)
        return Data(out)
    }

    private static let lowerHex = Array("0123456789abcdef".utf8)
    private static let upperHex = Array("0123456789ABCDEF".utf8)

    /// 16 bytes (`byte(0)` first) as 8-4-4-4-12 hex digits.
    private static func appendUUIDBytes(digits: [UInt8], to out: inout [UInt8], _ byte: (Int) -> UInt8) {
        for index in 0..<16 {
            if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
            let b = byte(index)
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
    }

    /// A Bluetooth UUID as `BluetoothUUID.string` writes it (lower case).
    private static func appendUUID(_ uuid: BluetoothUUID, to out: inout [UInt8]) {
        appendUUIDBytes(digits: lowerHex, to: &out) { index in
            UInt8(truncatingIfNeeded: (index < 8 ? uuid.high : uuid.low) >> (56 - 8 * (index % 8)))
        }
    }

    /// A Foundation UUID as `UUID.uuidString` writes it (upper case).
    private static func appendUUID(_ uuid: UUID, to out: inout [UInt8]) {
        withUnsafeBytes(of: uuid.uuid) { raw in
            appendUUIDBytes(digits: upperHex, to: &out) { raw[$0] }
        }
    }
}
