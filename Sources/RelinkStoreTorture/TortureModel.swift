import Foundation
public import RelinkStore
public import RelinkModel

/// An in-memory model of the store's semantics for the mutations the torture
/// workload uses; its `state` is what the database must equal.
public struct TortureModel: Sendable, Equatable {
    struct Identifier: Sendable, Equatable {
        var record: RestoreIdentifierRecord
        var scan: ScanIntent?
        var connectionEvents: ConnectionEventRegistration?
        var connections: [PeripheralID: ConnectionIntent] = [:]
        var subscriptions: [String: Subscription] = [:]
        var events: [OutboxEvent] = []
        var nextSequence: Int64 = 1
        var droppedTotal: Int64 = 0
        var droppedRange: ClosedRange<Int64>?
    }

    var identifiers: [RestoreIdentifier: Identifier] = [:]
    var peripherals: [PeripheralID: PeripheralRecord] = [:]
    var adapterStates: [String: AdapterStatus] = [:]
    var gattDatabases: [PeripheralID: GattDatabase] = [:]
    var peripheralManagers: [RestoreIdentifier: PeripheralManagerRecord] = [:]

    public init() {}

    /// Applies one mutation list as the store does (all of it; the workload
    /// only generates valid lists).
    mutating func apply(_ mutations: [StoreMutation]) {
        for mutation in mutations { apply(mutation) }
    }

    private mutating func apply(_ mutation: StoreMutation) {
        switch mutation {
        case .putIdentifier(let record):
            if identifiers[record.id] == nil { identifiers[record.id] = Identifier(record: record) } else {
                identifiers[record.id]?.record.ownerUID = record.ownerUID
                identifiers[record.id]?.record.outboxLimit = record.outboxLimit
                identifiers[record.id]?.record.namePreference = record.namePreference
            }
        case .removeIdentifier(let id):
            identifiers[id] = nil
            peripheralManagers[id] = nil
        case .putScanIntent(let id, let scan): identifiers[id]?.scan = scan
        case .removeScanIntent(let id): identifiers[id]?.scan = nil
        case .putConnectionEvents(let id, let registration): identifiers[id]?.connectionEvents = registration
        case .removeConnectionEvents(let id): identifiers[id]?.connectionEvents = nil
        case .putPeripheral(var record):
            if let existing = peripherals[record.id] { record.createdAt = existing.createdAt }
            peripherals[record.id] = record
        case .removePeripheral(let id):
            peripherals[id] = nil
            gattDatabases[id] = nil
            for key in Array(identifiers.keys) {
                guard var entry = identifiers[key] else { continue }
                entry.connections[id] = nil
                entry.subscriptions = entry.subscriptions.filter { $0.value.peripheral != id }
                identifiers[key] = entry
            }
        case .putConnectionIntent(let intent): identifiers[intent.identifier]?.connections[intent.peripheral] = intent
        case .removeConnectionIntent(let id, let peripheral): identifiers[id]?.connections[peripheral] = nil
        case .addSubscription(let s):
            if identifiers[s.identifier]?.subscriptions[Self.key(s)] == nil { identifiers[s.identifier]?.subscriptions[Self.key(s)] = s }
        case .removeSubscription(let s): identifiers[s.identifier]?.subscriptions[Self.key(s)] = nil
        case .appendEvent(let draft): append(draft)
        case .acknowledgeEvents(let id, let through): acknowledge(id, through: through)
        case .countUnstoredEvents(let id, let count, let range):
            guard var entry = identifiers[id], count > 0 else { return }
            entry.droppedTotal += count
            if let range {
                entry.droppedRange = min(entry.droppedRange?.lowerBound ?? range.lowerBound, range.lowerBound)
                    ... max(entry.droppedRange?.upperBound ?? range.upperBound, range.upperBound)
                entry.nextSequence = max(entry.nextSequence, range.upperBound + 1)
            }
            identifiers[id] = entry
        case .putAdapterState(let adapter, let status): adapterStates[adapter] = status
        case .putGattDatabase(let peripheral, let database): if peripherals[peripheral] != nil { gattDatabases[peripheral] = database }
        case .putPeripheralManager(let id, let record):
            if identifiers[id] != nil { peripheralManagers[id] = record.isEmpty ? nil : record }
        case .putLaunchSpec:
            break  // not in `StoredState`: read by `RelinkStore.launchSpecs()` (the workload sets none)
        case .putTransfer, .setTransferOffset, .removeTransfer:
            break  // the workload makes no transfers
        }
    }

    private mutating func append(_ draft: OutboxEventDraft) {
        guard var entry = identifiers[draft.identifier] else { return }
        entry.events.append(OutboxEvent(identifier: draft.identifier, sequence: entry.nextSequence, kind: draft.kind,
                                        payload: draft.payload, createdAt: draft.createdAt))
        entry.nextSequence += 1
        let excess = entry.events.count - entry.record.outboxLimit
        if excess > 0 {
            let oldest = entry.events[0].sequence
            let newest = entry.events[excess - 1].sequence
            entry.events.removeFirst(excess)
            entry.droppedTotal += Int64(excess)
            entry.droppedRange = min(entry.droppedRange?.lowerBound ?? oldest, oldest)...max(entry.droppedRange?.upperBound ?? newest, newest)
        }
        identifiers[draft.identifier] = entry
    }

    private mutating func acknowledge(_ id: RestoreIdentifier, through: Int64) {
        guard var entry = identifiers[id] else { return }
        entry.events.removeAll { $0.sequence <= through }
        if let range = entry.droppedRange {
            if range.upperBound <= through { entry.droppedRange = nil }
            else if range.lowerBound <= through { entry.droppedRange = (through + 1)...range.upperBound }
        }
        identifiers[id] = entry
    }

    static func key(_ s: Subscription) -> String {
        "\(s.identifier)|\(s.peripheral)|\(s.characteristic)"
    }

    /// The state `RelinkStore.loadState()` must return.
    public var state: StoredState {
        let ids = identifiers.values.sorted { $0.record.id < $1.record.id }.map { entry in
            StoredState.Identifier(
                record: entry.record, scan: entry.scan,
                connections: entry.connections.values.sorted { $0.peripheral < $1.peripheral },
                subscriptions: entry.subscriptions.values.sorted(),
                outbox: OutboxStatus(nextSequence: entry.nextSequence, pendingCount: entry.events.count,
                                     droppedTotal: entry.droppedTotal, droppedRange: entry.droppedRange,
                                     firstSequence: entry.events.first?.sequence),
                connectionEvents: entry.connectionEvents)
        }
        let peripherals = peripherals.values.sorted { $0.id < $1.id }
        var state = StoredState(identifiers: ids, peripherals: peripherals, adapterStates: adapterStates, gattDatabases: gattDatabases)
        state.peripheralManagers = peripheralManagers
        return state
    }

    /// The events each identifier's outbox must hold, oldest first.
    public var events: [RestoreIdentifier: [OutboxEvent]] { identifiers.mapValues(\.events) }

    /// Live identifiers, sorted (the workload picks targets from these).
    var liveIdentifiers: [RestoreIdentifier] { identifiers.keys.sorted() }
}
