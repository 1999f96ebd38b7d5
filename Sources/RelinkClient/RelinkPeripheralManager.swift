public import RelinkModel
import DBus

/// The peripheral role of a restore identifier, shaped like a
/// `CBPeripheralManager` created with
/// `CBPeripheralManagerOptionRestoreIdentifierKey`: relinkd publishes the
/// services, advertises and keeps subscribed centrals across restarts of
/// this program and of relinkd (docs/api/PeripheralManager1.md).
///
/// ```swift
/// let manager = RelinkPeripheralManager(restoreIdentifier: "sensor-hub", bus: .system)
/// let restored = try await manager.connect()         // willRestoreState: comes first
/// if restored?.services.isEmpty ?? true { try await manager.add(service) }
/// try await manager.startAdvertising(PeripheralAdvertisement(localName: "Sensor-1", serviceUUIDs: [service.uuid]))
/// for await event in manager.events {
///     switch event.peripheralManagerEvent {
///     case .readRequest(let request, _, _, _, _)?: try await manager.respond(to: request, value: reading())
///     case .writeRequest(let request, _, _, _, let value, _, _)? where request != 0:
///         apply(value); try await manager.respond(to: request)
///     case .readyToUpdate?: sendPending()
///     default: break
///     }
///     try await manager.acknowledge(through: event.sequence)
/// }
/// ```
///
/// The identifier has one event stream for both roles: ``events`` yields
/// every event of the identifier (the central role's kinds too, if the
/// program uses both), each once, in sequence order, replayed ones first,
/// exactly as ``RelinkCentral/events``; acknowledge what was processed. A
/// program that uses both roles on one identifier uses one
/// ``RelinkPeripheralManager`` and reaches the central role through
/// ``central``.
///
/// Every method throws ``RelinkClientError``; `InvalidArguments` is thrown
/// before anything is sent when an argument breaks relinkd's rules.
public actor RelinkPeripheralManager {
    /// The identifier's connection to relinkd: registration, events,
    /// acknowledgements, re-registration after relinkd restarts, and the
    /// central role's calls.
    public nonisolated let central: RelinkCentral

    /// The restore identifier, as given.
    public nonisolated var restoreIdentifier: String { central.restoreIdentifier }
    /// Events of the identifier, in sequence order, each once (``RelinkCentral/events``).
    public nonisolated var events: RelinkEvents { central.events }

    /// A peripheral manager for `restoreIdentifier`; nothing is sent until ``connect(options:)``.
    /// - Parameter reattach: register again by itself when relinkd restarts.
    public init(restoreIdentifier: String, bus: RelinkBus = .system, reattach: Bool = true) {
        central = RelinkCentral(restoreIdentifier: restoreIdentifier, bus: bus, reattach: reattach)
    }

    /// Registers the identifier with relinkd and attaches to it.
    /// - Returns: the restored peripheral role (services, advertisement,
    ///   cached values, subscribed centrals), before any event, like
    ///   `peripheralManager:willRestoreState:`; nil from a relinkd without
    ///   the peripheral role.
    /// - Throws: as ``RelinkCentral/connect(options:)``.
    @discardableResult
    public func connect(options: RelinkRegisterOptions = .init()) async throws(RelinkClientError) -> PeripheralManagerRecord? {
        try await central.connect(options: options).peripheralManager
    }

    /// The restored peripheral role of the latest registration (replaced
    /// when the manager registered again after relinkd restarted).
    public var restoredState: PeripheralManagerRecord? {
        get async { await central.restoredState?.peripheralManager }
    }

    @discardableResult
    private func call(_ call: RelinkPeripheralManagerCall) async throws(RelinkClientError) -> Message {
        try await central.connected().peripheralManager(restoreIdentifier, call)
    }

    /// Publishes a service (`add(_:)`); relinkd registers it with bluetoothd at once.
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (the service breaks
    ///   a rule, or includes one not published), `AlreadyExists`,
    ///   `NotSupported` (bluetoothd refused), `StoreFailed`, `UnknownIdentifier`, `NotConnected`; unreachable.
    public func add(_ service: PublishedService) async throws(RelinkClientError) {
        try await call(.addService(service))
    }

    /// Removes a published service (`remove(_:)`).
    /// - Throws: ``RelinkClientError``: `UnknownCharacteristic` (not
    ///   published), `InvalidArguments` (another service includes it),
    ///   `NotSupported`, `StoreFailed`, `UnknownIdentifier`, `NotConnected`; unreachable.
    public func remove(_ service: BluetoothUUID) async throws(RelinkClientError) {
        try await call(.removeService(service))
    }

    /// Removes every published service (`removeAllServices()`); the advertisement stays.
    /// - Throws: ``RelinkClientError``: `NotSupported`, `StoreFailed`, `UnknownIdentifier`, `NotConnected`; unreachable.
    public func removeAllServices() async throws(RelinkClientError) {
        try await call(.removeAllServices)
    }

    /// Advertises, replacing what the identifier advertised; kept across
    /// restarts until ``stopAdvertising()``.
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (over 31 bytes, a
    ///   service UUID twice), `NotSupported`, `StoreFailed`, `UnknownIdentifier`, `NotConnected`; unreachable.
    public func startAdvertising(_ advertisement: PeripheralAdvertisement) async throws(RelinkClientError) {
        try await call(.startAdvertising(advertisement))
    }

    /// Stops advertising.
    /// - Throws: ``RelinkClientError``: `NotSupported`, `StoreFailed`, `UnknownIdentifier`, `NotConnected`; unreachable.
    public func stopAdvertising() async throws(RelinkClientError) {
        try await call(.stopAdvertising)
    }

    /// Answers a `read-request` with `value`, or a `write-request` with
    /// success (`respond(to:withResult: .success)`).
    /// - Throws: ``RelinkClientError``: `UnknownRequest` (not waiting:
    ///   answered, past the bound, never handed out), `InvalidArguments`
    ///   (over 512 bytes), `UnknownIdentifier`, `NotConnected`; unreachable.
    public func respond(to request: UInt64, value: [UInt8] = []) async throws(RelinkClientError) {
        try await call(.respond(request: request, value: value))
    }

    /// Answers a request with an ATT error (`respond(to:withResult:)`).
    /// - Throws: ``RelinkClientError``: `UnknownRequest`, `UnknownIdentifier`, `NotConnected`; unreachable.
    public func respond(to request: UInt64, error: ATTError) async throws(RelinkClientError) {
        try await call(.respondWithError(request: request, error: error))
    }

    /// Sends `value` to the centrals subscribed to a characteristic
    /// (`updateValue(_:for:onSubscribedCentrals:)`).
    /// - Returns: false when relinkd's update queue is full (`UpdateQueueFull`):
    ///   send it again after a `ready-to-update` event.
    /// - Throws: ``RelinkClientError``: `UnknownCharacteristic`,
    ///   `NotSupported` (neither notify nor indicate), `InvalidArguments`,
    ///   `UnknownIdentifier`, `NotConnected`; unreachable.
    @discardableResult
    public func updateValue(_ value: [UInt8], for characteristic: CharacteristicKey) async throws(RelinkClientError) -> Bool {
        do throws(RelinkClientError) {
            try await call(.updateValue(characteristic, value: value))
            return true
        } catch where error.name == .updateQueueFull {
            return false
        }
    }

    /// Sends several values to the centrals subscribed to a characteristic
    /// in one call (`UpdateValues`), in order: one round trip for up to
    /// ``maximumUpdateBatch`` values instead of one each.
    /// - Returns: how many of the first values relinkd took (0 when its
    ///   update queue is full); send the rest after a `ready-to-update` event.
    /// - Throws: as ``updateValue(_:for:)``; `InvalidArguments` for no value,
    ///   more than ``maximumUpdateBatch``, or one over 512 bytes (nothing sent).
    public func updateValues(_ values: [[UInt8]], for characteristic: CharacteristicKey) async throws(RelinkClientError) -> Int {
        do throws(RelinkClientError) {
            let reply = try await call(.updateValues(characteristic, values: values))
            guard case .uint32(let accepted)? = reply.body.first else { throw .badReply("UpdateValues", "\(reply.body)") }
            return Int(accepted)
        } catch where error.name == .updateQueueFull {
            return 0
        }
    }

    /// The peripheral role as relinkd keeps it now.
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier`, `NotConnected`; unreachable.
    public func state() async throws(RelinkClientError) -> PeripheralManagerRecord {
        try await central.connected().peripheralManagerState(restoreIdentifier)
    }

    /// Marks every event up to `sequence` as processed (``RelinkCentral/acknowledge(through:)``).
    /// - Throws: as ``RelinkCentral/acknowledge(through:)``.
    public func acknowledge(through sequence: UInt64) async throws(RelinkClientError) {
        try await central.acknowledge(through: sequence)
    }

    /// Detaches from relinkd and finishes ``events``; the published
    /// services and the advertisement stay in relinkd.
    public func close() async { await central.close() }
}
