import BlueZ
import DBus
import Foundation
import Logging
import RelinkAPI
import RelinkModel
import RelinkStore
import Restoration

/// The peripheral role's part of the daemon's state.
struct PeripheralRoleState {
    /// Each identifier's published services, advertisement, cached values
    /// and subscribed centrals (durable: the store's `peripheral_manager`).
    var records: [RestoreIdentifier: PeripheralManagerRecord] = [:]
    /// Requests handed to programs and not yet answered.
    var pending = PendingRequests<ContinuousClock.Instant>()
    /// Who waits for each pending request's answer (bluetoothd's call), and what it is.
    var waiting: [UInt64: (reply: CheckedContinuation<HostedReply, Never>, key: CharacteristicKey, isRead: Bool, offset: Int)] = [:]
    /// Each identifier's update flow control.
    var windows: [RestoreIdentifier: UpdateWindow] = [:]
    /// Each identifier's accepted updates not yet handed to the bus, in
    /// order; the first ``sending`` of them are being sent (``Daemon/sendQueuedUpdates(_:)``).
    var outgoing: [RestoreIdentifier: [QueuedUpdate]] = [:]
    /// How many of each identifier's queued updates the sending task has.
    var sending: [RestoreIdentifier: Int] = [:]
    /// Identifiers whose services are registered and whose advertisement
    /// waits for an advertising instance of the controller
    /// (``Daemon/startWaitingAdvertisements()``).
    var advertisementsWaiting: Set<RestoreIdentifier> = []
    /// Identifiers whose registration bluetoothd answered `UnknownMethod`
    /// or `UnknownObject`: the adapter had no `GattManager1` or
    /// `LEAdvertisingManager1` yet (bluetoothd 5.82 adds them after the
    /// adapter, and 5.66 the advertising manager only once the adapter is
    /// on). Registered again when one appears (``Daemon/managerAppeared(_:)``).
    var awaitingManager: Set<RestoreIdentifier> = []
}

/// An input of the peripheral role (``DaemonInput/peripheralRole(_:)``).
enum PeripheralRoleInput: Sendable {
    /// bluetoothd asks a hosted application something; answered through the continuation.
    case request(ObjectPath, HostedRequest, CheckedContinuation<HostedReply, Never>)
    /// A request's answer bound has passed.
    case expired(UInt64)
    /// Updates have been handed to the bus (or failed), `count` of them.
    case updateSent(RestoreIdentifier, count: Int)
}

/// A client's call to `PeripheralManager1`, with its arguments validated.
enum PeripheralManagerRequest: Sendable {
    case addService(PublishedService)
    case removeService(BluetoothUUID)
    case removeAllServices
    case startAdvertising(PeripheralAdvertisement)
    case stopAdvertising
    case respond(UInt64, [UInt8])
    case respondWithError(UInt64, ATTError)
    case updateValue(CharacteristicKey, [UInt8])
    case updateValues(CharacteristicKey, [[UInt8]])
    case state
}

// The peripheral role (issue 23): relinkd hosts each identifier's GATT
// application and advertisement with bluetoothd, registers them again by
// itself after any restart, answers what it can while the program is away,
// and hands the rest to the program as events.
extension Daemon {
    /// How long relinkd waits for a program's answer to a request before it
    /// answers the central itself with ``ATTError/unlikelyError`` (well
    /// inside ATT's 30 s transaction timeout and D-Bus's 25 s call timeout).
    static let answerBound: Duration = .seconds(10)
    /// How many updates of one identifier may be handed to the bus and not
    /// yet sent before one more is refused (``UpdateWindow``).
    static let updateWindowCapacity = 16

    /// The root of an identifier's hosted application on relinkd's BlueZ
    /// connection: outside `/org/relink`, so that the client API's object
    /// manager never announces it.
    static func hostedRoot(_ id: RestoreIdentifier) -> ObjectPath {
        ObjectPath(fakeTrustedHostedRoot: "/relink/hosted/" + APIPath.escape(id.rawValue))
    }

    /// The identifier whose application is at `root`.
    func identifier(ofHostedRoot root: ObjectPath) -> RestoreIdentifier? {
        peripheralRole.records.keys.first { Self.hostedRoot($0) == root }
    }

    /// Where bluetoothd's calls to hosted applications go: into the loop.
    nonisolated func submitHosted(_ root: ObjectPath, _ request: HostedRequest) async -> HostedReply {
        await withCheckedContinuation { reply in
            if case .terminated = inputContinuation.yield(.peripheralRole(.request(root, request, reply))) {
                reply.resume(returning: .error(.unlikelyError))
            }
        }
    }

    /// Start-up: the stored peripheral roles.
    func peripheralRoleLoaded(_ records: [RestoreIdentifier: PeripheralManagerRecord]) {
        peripheralRole.records = records.filter { core.identifiers.contains($0.key) }
    }

    /// The ``DaemonInput/peripheralRole(_:)`` input.
    func handlePeripheralRole(_ input: PeripheralRoleInput) async {
        switch input {
        case .request(let root, let request, let reply):
            await hostedRequest(root, request, reply)
        case .expired(let number):
            guard let entry = peripheralRole.pending.expire(number, now: clock.now),
                  let waiting = peripheralRole.waiting.removeValue(forKey: number) else { return }
            logger.warning("the program did not answer a request in time: the central gets an ATT error", metadata: .journal([
                .restoreID: "\(entry.identifier)", .request: "\(number)", .characteristic: "\(waiting.key)", .attError: "\(ATTError.unlikelyError.rawValue)",
            ]))
            waiting.reply.resume(returning: .error(.unlikelyError))
        case .updateSent(let id, let count):
            updatesSent(id, count: count)
            var ready = false
            for _ in 0..<count {
                if peripheralRole.windows[id]?.sent() == true { ready = true }
            }
            if ready { try? emitGathered(.peripheralManager(.readyToUpdate), to: [id]) }
        }
    }

    /// Whether a program is attached to the identifier (`Register` or `Watch`).
    func clientAttached(_ id: RestoreIdentifier) -> Bool { !(api.attachments[id]?.isEmpty ?? true) }

    private func hostedRequest(_ root: ObjectPath, _ request: HostedRequest, _ reply: CheckedContinuation<HostedReply, Never>) async {
        guard let id = identifier(ofHostedRoot: root), var record = peripheralRole.records[id] else {
            return reply.resume(returning: .error(.unlikelyError))
        }
        let attached = clientAttached(id)
        switch request {
        case .read(let key, let offset, let central, let mtu):
            switch PeripheralRequestPolicy.read(key, offset: offset, in: record, clientAttached: attached) {
            case .answer(let value):
                reply.resume(returning: .value(value))
            case .refuse(let error):
                refused(id, key, central, error)
                reply.resume(returning: .error(error))
            case .forward:
                forward(id, key, isRead: true, offset: offset, reply) {
                    .readRequest(request: $0, central: central, characteristic: key, offset: offset, mtu: mtu)
                }
            }
        case .write(let key, let value, let offset, let kind, let central, let mtu):
            switch PeripheralRequestPolicy.write(key, value: value, offset: offset, withResponse: kind.withResponse, in: record, clientAttached: attached) {
            case .refuse(let error):
                refused(id, key, central, error)
                reply.resume(returning: .error(error))
            case .forward:
                forward(id, key, isRead: false, offset: offset, reply) {
                    .writeRequest(request: $0, central: central, characteristic: key, offset: offset, value: value, kind: kind, mtu: mtu)
                }
            case .commitThenAccept:
                // In the store before the central hears success: the program
                // reads it when it comes back, once, in order.
                do {
                    submitGathered()
                    try await commitNow(try Self.eventRequest(.peripheralManager(.writeRequest(
                        request: 0, central: central, characteristic: key, offset: offset, value: value, kind: kind, mtu: mtu)), to: [id]))
                    reply.resume(returning: .done)
                } catch {
                    logger.error("a central's write could not be stored: it gets an ATT error", metadata: .journal([
                        .restoreID: "\(id)", .characteristic: "\(key)", .error: "\(error)",
                    ]))
                    reply.resume(returning: .error(.unlikelyError))
                }
            }
        case .startNotify(let key, let central), .stopNotify(let key, let central):
            let on = if case .startNotify = request { true } else { false }
            if on { record.subscribers[key, default: []].insert(central) } else { record.subscribers[key]?.remove(central) }
            if record.subscribers[key]?.isEmpty == true { record.subscribers[key] = nil }
            peripheralRole.records[id] = record
            let event: PeripheralManagerEvent = on ? .subscribed(central: central, characteristic: key) : .unsubscribed(central: central, characteristic: key)
            if var request = try? Self.eventRequest(.peripheralManager(event), to: [id]) {
                request.mutations.insert(.putPeripheralManager(id, record), at: 0)
                enqueueGathered(request)
            }
            reply.resume(returning: .done)
        case .advertisementReleased:
            logger.notice("bluetoothd released the advertisement; relinkd registers it again when bluetoothd is back", metadata: .journal([.restoreID: "\(id)"]))
            reply.resume(returning: .done)
        }
    }

    private func refused(_ id: RestoreIdentifier, _ key: CharacteristicKey, _ central: String, _ error: ATTError) {
        logger.info("a central's request answered with an ATT error", metadata: .journal([
            .restoreID: "\(id)", .characteristic: "\(key)", .central: "\(central)", .attError: "\(error.rawValue)",
        ]))
    }

    /// Hands a request to the program: an event with a request number, and
    /// a timer for the answer bound.
    private func forward(_ id: RestoreIdentifier, _ key: CharacteristicKey, isRead: Bool, offset: Int, _ reply: CheckedContinuation<HostedReply, Never>,
                         _ event: (UInt64) -> PeripheralManagerEvent) {
        let deadline = clock.now + Self.answerBound
        let number = peripheralRole.pending.add(identifier: id.rawValue, deadline: deadline)
        do {
            try emitGathered(.peripheralManager(event(number)), to: [id])
        } catch {
            _ = peripheralRole.pending.answer(number, by: id.rawValue)
            return reply.resume(returning: .error(.unlikelyError))
        }
        peripheralRole.waiting[number] = (reply, key, isRead, offset)
        input(.peripheralRole(.expired(number)), at: deadline)
    }

    // MARK: The API

    /// A `PeripheralManager1` call.
    func peripheralManager(_ id: RestoreIdentifier, _ request: PeripheralManagerRequest) async throws(RelinkError) -> APIResult {
        var record = peripheralRole.records[id] ?? PeripheralManagerRecord()
        switch request {
        case .addService(let service):
            guard !record.services.contains(where: { $0.uuid == service.uuid }) else {
                throw RelinkError(.alreadyExists, "service \(service.uuid) is already published by \(id): remove it first")
            }
            record.services.append(service)
            try validated(record.services)
            try await change(id, to: record, why: "service added")
        case .removeService(let uuid):
            guard record.services.contains(where: { $0.uuid == uuid }) else { throw RelinkError(.unknownCharacteristic, "\(id) publishes no service \(uuid)") }
            if let includer = record.services.first(where: { $0.includedServices.contains(uuid) }) {
                throw RelinkError(.invalidArguments, "service \(includer.uuid) includes \(uuid): remove it first")
            }
            record.services.removeAll { $0.uuid == uuid }
            record.cachedValues = record.cachedValues.filter { $0.key.service != uuid }
            record.subscribers = record.subscribers.filter { $0.key.service != uuid }
            try await change(id, to: record, why: "service removed")
        case .removeAllServices:
            record.services = []
            record.cachedValues = [:]
            record.subscribers = [:]
            try await change(id, to: record, why: "services removed")
        case .startAdvertising(let advertisement):
            do { try advertisement.validate() } catch { throw RelinkError(.invalidArguments, error.description) }
            record.advertisement = advertisement
            try await change(id, to: record, why: "advertising started", startsAdvertising: true)
        case .stopAdvertising:
            record.advertisement = nil
            try await change(id, to: record, why: "advertising stopped")
        case .respond(let number, let value):
            guard value.count <= maximumAttributeValueBytes else {
                throw RelinkError(.invalidArguments, "the value has \(value.count) bytes, more than \(maximumAttributeValueBytes)")
            }
            let waiting = try takeRequest(number, of: id)
            waiting.reply.resume(returning: waiting.isRead ? .value(value) : .done)
            guard waiting.isRead else { break }
            do {
                try await keepCached(value, for: waiting.key, of: id, in: record)
            } catch {
                throw RelinkError(.storeFailed, "the central got the value, but it could not be kept: \(error.message)")
            }
        case .respondWithError(let number, let error):
            try takeRequest(number, of: id).reply.resume(returning: .error(error))
        case .updateValue(let key, let value):
            try await updateMany(id, key, [value], record: record)
        case .updateValues(let key, let values):
            return APIResult(values: [.uint32(UInt32(try await updateMany(id, key, values, record: record)))])
        case .state:
            return APIResult(values: [restoredPeripheralRole(id)])
        }
        return APIResult()
    }

    private func validated(_ services: [PublishedService]) throws(RelinkError) {
        do { try PublishedService.validate(services) } catch { throw RelinkError(.invalidArguments, error.description) }
    }

    private func takeRequest(_ number: UInt64, of id: RestoreIdentifier) throws(RelinkError)
        -> (reply: CheckedContinuation<HostedReply, Never>, key: CharacteristicKey, isRead: Bool, offset: Int) {
        guard peripheralRole.pending.answer(number, by: id.rawValue) != nil, let waiting = peripheralRole.waiting.removeValue(forKey: number) else {
            throw RelinkError(.unknownRequest, "\(id) has no request \(number) waiting for an answer (never handed out, answered already, or answered by relinkd after \(Self.answerBound))")
        }
        return waiting
    }

    /// Commits a changed record, then registers it with bluetoothd; a
    /// refusal by bluetoothd puts the record back as it was (store and
    /// registration) and is the call's error.
    /// A `StartAdvertising` past the controller's advertising instances
    /// is refused with `AdvertisingLimitReached` and
    /// undone; any other change of an identifier whose advertisement
    /// already waited for an instance stands (its advertisement still waits).
    private func change(_ id: RestoreIdentifier, to record: PeripheralManagerRecord, why: String,
                        startsAdvertising: Bool = false) async throws(RelinkError) {
        let previous = peripheralRole.records[id]
        try await commit([.putPeripheralManager(id, record)])
        peripheralRole.records[id] = record.isEmpty ? nil : record
        let refusal = await host(id, reason: why)
        let overLimit = refusal.map(Self.isAdvertisingLimit) ?? false
        guard let refusal, !overLimit || startsAdvertising else {
            if record.isEmpty { peripheralRole.windows[id] = nil }
            if previous?.advertisement != nil, record.advertisement == nil { await startWaitingAdvertisements() }
            return
        }
        let restored = previous ?? PeripheralManagerRecord()
        try? await commit([.putPeripheralManager(id, restored)])
        peripheralRole.records[id] = restored.isEmpty ? nil : restored
        await host(id, reason: "refused change undone")
        if overLimit {
            throw RelinkError(.advertisingLimitReached, "the adapter's controller has no advertising instance left for \(id)'s advertisement "
                                           + "(bluetoothd: \(refusal.message)); nothing changed: stop another advertisement first")
        }
        throw RelinkError(.notSupported, "bluetoothd refused it: \(refusal.name): \(refusal.message)")
    }

    /// Checks one update and takes a place for it in the identifier's
    /// update window; the caller keeps the value (a `cacheable`
    /// characteristic) and hands it to bluetoothd.
    /// - Throws: `UnknownCharacteristic`, `NotSupported`, `InvalidArguments`,
    ///   `UpdateQueueFull`.
    func admitUpdate(_ id: RestoreIdentifier, _ key: CharacteristicKey, _ value: [UInt8],
                     record: PeripheralManagerRecord) throws(RelinkError) {
        guard let characteristic = record.characteristic(key) else { throw RelinkError(.unknownCharacteristic, "\(id) publishes no characteristic \(key)") }
        guard !characteristic.properties.isDisjoint(with: .notifying) else {
            throw RelinkError(.notSupported, "\(key) has neither notify nor indicate")
        }
        guard value.count <= maximumAttributeValueBytes else {
            throw RelinkError(.invalidArguments, "the value has \(value.count) bytes, more than \(maximumAttributeValueBytes)")
        }
        var window = peripheralRole.windows[id] ?? UpdateWindow(capacity: Self.updateWindowCapacity)
        let taken = window.take()
        peripheralRole.windows[id] = window
        guard taken else {
            throw RelinkError(.updateQueueFull, "\(window.inFlight) updates of \(id) are on their way: wait for the ready-to-update event")
        }
    }

    /// Keeps `value` as `key`'s cached value when the characteristic is
    /// `cacheable` and the value changed: committed before this returns,
    /// so that the call answered after it survives a SIGKILL right after.
    /// - Throws: `StoreFailed`; nothing is kept then.
    func keepCached(_ value: [UInt8], for key: CharacteristicKey, of id: RestoreIdentifier,
                    in record: PeripheralManagerRecord) async throws(RelinkError) {
        guard record.characteristic(key)?.cacheable == true, record.cachedValues[key] != value else { return }
        var kept = record
        kept.cachedValues[key] = value
        try await commit([.putPeripheralManager(id, kept)])
        peripheralRole.records[id] = kept
    }

    /// `Register`'s `peripheral_manager` entry: the restored peripheral
    /// role (services, advertisement, cached values, subscribed centrals).
    func restoredPeripheralRole(_ id: RestoreIdentifier) -> DBusValue {
        .string(peripheralRoleJSON(id))
    }

    /// The identifier is gone: its application and advertisement too.
    func peripheralRoleUnregistered(_ id: RestoreIdentifier) async {
        guard peripheralRole.records.removeValue(forKey: id) != nil else { return }
        peripheralRole.windows[id] = nil
        await host(id, reason: "identifier unregistered")
        await startWaitingAdvertisements()
    }
}

extension ObjectPath {
    /// A path made of constants and ``APIPath/escape(_:)``'s letters,
    /// digits and `_`: valid by construction.
    init(fakeTrustedHostedRoot text: String) {
        self = (try? ObjectPath(text)) ?? .root
    }
}
