import Foundation
import RelinkStore
import Restoration
import RelinkModel
import RelinkAPI

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
    /// - Throws: ``RelinkError`` when the store rejects a value.
    static func storeIntent(_ record: ConnectionIntentRecord, bond: IntentBond = IntentBond()) throws(RelinkError) -> ConnectionIntent {
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
                matchServices: record.options.match.services.sorted(), matchDataPrefixes: record.options.match.dataPrefixes.sorted(),
                pairOnDemand: record.options.pairOnDemand, bond: bond,
                pairingCapability: record.options.pairingCapability)
        } catch {
            throw RelinkError(.failed, "cannot store the connection intent: \(error)")
        }
    }

    /// The core record for a stored intent and its peripheral row.
    /// - Throws: ``DomainError`` for values the core rejects.
    static func coreRecord(_ row: ConnectionIntent, peripheral: PeripheralRecord?) throws(DomainError) -> ConnectionIntentRecord {
        var deadline = ConnectionDeadline.pendingUntilCancelled
        if let overall = row.overallTimeout { deadline = .after(overall) }
        let services = Set(peripheral?.serviceUUIDs ?? [])
        let match = MatchRule(services: Set(row.matchServices), localName: row.matchName, manufacturerID: row.matchManufacturerID,
                              dataPrefixes: Set(row.matchDataPrefixes))
        let options = try ConnectionOptions(strategies: row.strategies, deadline: deadline, services: services, match: match,
                                            pairOnDemand: row.pairOnDemand, pairingCapability: row.pairingCapability)
        var phase: ConnectionIntentRecord.Phase = row.state == .connected ? .connected : .pending
        if row.lastErrorClass == idleMarker {
            phase = .idle
        } else if let marker = row.lastErrorClass, marker.hasPrefix(failedPrefix) {
            let failureClass = FailureClass(rawValue: String(marker.dropFirst(failedPrefix.count))) ?? .unknown
            phase = .failed(ConnectionFailure(failureClass, errorName: RelinkErrorName.failed.rawValue, message: row.lastErrorMessage ?? ""))
        }
        return ConnectionIntentRecord(
            intent: ConnectionIntentID(identifier: row.identifier, peripheral: row.peripheral),
            options: options, address: peripheral?.address.address, phase: phase)
    }

    /// The store's address of a core address on an adapter.
    /// - Throws: ``RelinkError``.
    static func deviceAddress(_ address: BluetoothAddress, adapter: String) throws(RelinkError) -> DeviceAddress {
        do {
            return try DeviceAddress(adapter: adapter, address: address)
        } catch {
            throw RelinkError(.invalidArguments, "\(error)")
        }
    }

    /// An outbox draft for an event stored `at`: kind is the event's
    /// name, payload its JSON with `at` in it (``payload(_:at:)``).
    /// - Throws: `Failed` when it cannot be encoded.
    static func draft(_ event: RelinkEvent, for id: RestoreIdentifier, at: Date = Date()) throws(RelinkError) -> OutboxEventDraft {
        try draft(event, payload: payload(event, at: at), for: id, at: at)
    }

    /// An outbox draft for an event whose payload is already encoded (one
    /// encoding for every identifier the event goes to), stored `at`.
    static func draft(_ event: RelinkEvent, payload: Data, for id: RestoreIdentifier, at: Date) throws(RelinkError) -> OutboxEventDraft {
        do {
            return try OutboxEventDraft(identifier: id, kind: event.name, payload: payload, createdAt: at)
        } catch {
            throw RelinkError(.failed, "cannot encode event \(event.name): \(error)")
        }
    }

    /// An event's payload in the wire format (RelinkAPI's `RelinkEvent+Wire`),
    /// with when it is stored (`atMs`).
    /// - Throws: `Failed` when it cannot be encoded.
    static func payload(_ event: RelinkEvent, at: Date) throws(RelinkError) -> Data {
        do { return try event.encoded(at: at) } catch { throw RelinkError(.failed, "cannot encode event \(event.name): \(error)") }
    }
}
