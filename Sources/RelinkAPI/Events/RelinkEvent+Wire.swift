import Foundation
import RelinkModel

// Format version 2, field by field (docs/api/events.md, "Kinds and payloads"):
// * a peripheral: `{"uuid": "<UUID, uppercase>"}`;
// * an address: `{"address": "AA:BB:CC:DD:EE:FF", "type": "public"|"random"}`;
// * a failure: `{"errorName", "failureClass", "message"}`;
// * a characteristic: `{"service", "characteristic"}`, lowercase 128-bit UUIDs;
// * manufacturer data: a flat array of alternating company id and byte array;
//   the rest of the advertising data (added within format 2, each left out
//   when unknown or empty): `serviceData` an object of lowercase 128-bit
//   UUID to byte array, `txPower` and `appearance` numbers, `flags` a byte
//   array, `advertisingData` a flat array of alternating AD type and byte
//   array;
// * times in `name-updated`: `seenAtMs`, Unix milliseconds, an integer, as
//   every other time of the API (format 1 wrote `seenAt`, seconds since
//   2001-01-01 00:00:00 UTC; the decoder still reads it, for events stored
//   by an older relinkd);
// * an adapter's state (`adapter-state`, the one kind without a peripheral):
//   `{"adapter": "hci0", "roles": [..], "state": ..}`, `AdapterState` and
//   `AdapterRole` wire names;
// * a GATT database (`services-changed`): `GattDatabase`'s one JSON form
//   (RelinkModel), under `database`;
// * write limits (`connected`, `restored`; added within format 2, left out
//   when the link's MTU is unknown): `mtu`, `maximumWriteWithResponse`,
//   `maximumWriteWithoutResponse`, numbers (`Peripheral1`'s properties of
//   the same names); a reader takes `mtu` and derives the other two;
// * `atMs` in every kind's object (added within format 2): when relinkd
//   stored the event, Unix milliseconds; left out by events stored before;
// * optional fields are left out when unknown, never `null`.

extension RelinkEvent {
    /// The coding keys of every object of the format.
    enum Key: String, CodingKey {
        case discovered, connected, restored, failedToConnect, disconnected, valueNotified, nameUpdated, subscriptionFailed, adapterState
        case notificationState, notifying
        case connectionEvent, event
        case servicesChanged, database, bondRemoved, pairingRequest, passkey
        case peripheral, advertisement, address, route, reason, characteristic, value, update
        case uuid, type, localName, manufacturerData, rssi, serviceUUIDs
        case serviceData, txPower, appearance, flags, advertisingData
        case errorName, failureClass, message, service, atMs
        case change, resolved, names, current, previous, source, name, advertising, gap, seenAt, seenAtMs
        case adapter, roles, state
        case mtu, maximumWriteWithResponse, maximumWriteWithoutResponse
        case readRequest, writeRequest, subscribed, unsubscribed, readyToUpdate, request, central, offset, withResponse, kind
        case transferProgress, transferCompleted, transferFailed, transfer, length
    }

    /// The payload with its explicit `Codable`.
    struct Wire: Codable {
        /// `connection-event`'s `event` for a link that came up (CoreBluetooth's `peerConnected`).
        static let peerConnected = "peer-connected"
        /// `connection-event`'s `event` for a link that went down (`peerDisconnected`).
        static let peerDisconnected = "peer-disconnected"

        let payload: RelinkEvent
        /// When relinkd stored the event (`atMs`); nil in events stored
        /// before relink wrote it, and when encoding without it.
        let at: Date?

        init(_ payload: RelinkEvent, at: Date? = nil) {
            self.payload = payload
            self.at = at
        }

        func encode(to encoder: any Encoder) throws {
            var outer = encoder.container(keyedBy: Key.self)
            guard let key = Key(stringValue: payload.kind.payloadKey) else { return }
            var body = outer.nestedContainer(keyedBy: Key.self, forKey: key)
            if let peripheral = payload.peripheral { try Self.encodePeripheral(peripheral, in: &body) }
            if let at { try body.encode(at.unixMilliseconds, forKey: .atMs) }
            switch payload {
            case .adapterState(let adapter, let status):
                try body.encode(adapter, forKey: .adapter)
                try body.encode(status.roles.map(\.rawValue), forKey: .roles)
                try body.encode(status.state.rawValue, forKey: .state)
            case .servicesChanged(_, let database):
                try body.encode(database, forKey: .database)
            case .bondRemoved:
                break  // the peripheral only
            case .pairingRequest(_, let request, let kind, let passkey):
                try body.encode(request, forKey: .request)
                try body.encode(kind, forKey: .kind)
                try body.encodeIfPresent(passkey, forKey: .passkey)
            case .peripheralManager(let event):
                try Self.encodePeripheralManager(event, in: &body)
            case .transfer(let event):
                try Self.encodeTransfer(event, in: &body)
            case .discovered(_, let advertisement):
                var ad = body.nestedContainer(keyedBy: Key.self, forKey: .advertisement)
                try Self.encodeAddress(advertisement.address, in: &ad, forKey: .address)
                try ad.encodeIfPresent(advertisement.localName, forKey: .localName)
                try ad.encodeIfPresent(advertisement.rssi, forKey: .rssi)
                try ad.encode(advertisement.serviceUUIDs.sorted().map(\.string), forKey: .serviceUUIDs)
                try Self.encodeData(advertisement.data, in: &ad)
            case .connected(_, let address, let route, let limits), .restored(_, let address, let route, let limits):
                try Self.encodeAddress(address, in: &body, forKey: .address)
                try body.encode(route.rawValue, forKey: .route)
                if let limits {
                    try body.encode(limits.mtu, forKey: .mtu)
                    try body.encode(limits.withResponse, forKey: .maximumWriteWithResponse)
                    try body.encode(limits.withoutResponse, forKey: .maximumWriteWithoutResponse)
                }
            case .failedToConnect(_, let reason):
                try Self.encodeFailure(reason, in: &body)
            case .disconnected(_, let reason):
                if let reason { try Self.encodeFailure(reason, in: &body) }
            case .valueNotified(_, let characteristic, let value):
                try Self.encodeCharacteristic(characteristic, in: &body)
                try body.encode(value, forKey: .value)
            case .subscriptionFailed(_, let characteristic, let reason):
                try Self.encodeCharacteristic(characteristic, in: &body)
                try Self.encodeFailure(reason, in: &body)
            case .notificationState(_, let characteristic, let notifying, let reason):
                try Self.encodeCharacteristic(characteristic, in: &body)
                try body.encode(notifying, forKey: .notifying)
                if let reason { try Self.encodeFailure(reason, in: &body) }
            case .connectionEvent(_, let address, let connected, let reason):
                try body.encode(connected ? Self.peerConnected : Self.peerDisconnected, forKey: .event)
                if let address { try Self.encodeAddress(address, in: &body, forKey: .address) }
                if let reason { try Self.encodeFailure(reason, in: &body) }
            case .nameUpdated(_, let update):
                var u = body.nestedContainer(keyedBy: Key.self, forKey: .update)
                var change = u.nestedContainer(keyedBy: Key.self, forKey: .change)
                try change.encode(update.change.current, forKey: .current)
                try change.encodeIfPresent(update.change.previous, forKey: .previous)
                try change.encode(update.change.source.rawValue, forKey: .source)
                var names = u.nestedContainer(keyedBy: Key.self, forKey: .names)
                for (key, seen) in [(Key.advertising, update.names.advertising), (.gap, update.names.gap)] {
                    guard let seen else { continue }
                    var s = names.nestedContainer(keyedBy: Key.self, forKey: key)
                    try s.encode(seen.seenAt.unixMilliseconds, forKey: .seenAtMs)
                    try s.encode(seen.value, forKey: .value)
                }
                if let resolved = update.resolved {
                    var r = u.nestedContainer(keyedBy: Key.self, forKey: .resolved)
                    try r.encode(resolved.name, forKey: .name)
                    try r.encode(resolved.reason.rawValue, forKey: .reason)
                    try r.encode(resolved.source.rawValue, forKey: .source)
                }
            }
        }

        init(from decoder: any Decoder) throws {
            let outer = try decoder.container(keyedBy: Key.self)
            guard outer.allKeys.count == 1, let key = outer.allKeys.first,
                  let kind = EventKind.allCases.first(where: { $0.payloadKey == key.stringValue }) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not an event payload: expected one kind key"))
            }
            let body = try outer.nestedContainer(keyedBy: Key.self, forKey: key)
            at = try body.decodeIfPresent(Int64.self, forKey: .atMs).map(Date.init(unixMilliseconds:))
            // Every kind but `adapter-state` is about a peripheral.
            func peripheral() throws -> PeripheralID { try Self.decodePeripheral(body) }
            switch kind {
            case .discovered:
                let ad = try body.nestedContainer(keyedBy: Key.self, forKey: .advertisement)
                let services = try ad.decode([String].self, forKey: .serviceUUIDs).map { try BluetoothUUID(parsing: $0) }
                payload = .discovered(peripheral: try peripheral(), advertisement: Advertisement(
                    address: try Self.decodeAddress(ad, forKey: .address), localName: try ad.decodeIfPresent(String.self, forKey: .localName),
                    serviceUUIDs: Set(services), data: try Self.decodeData(ad), rssi: try ad.decodeIfPresent(Int16.self, forKey: .rssi)))
            case .connected, .restored:
                let address = try Self.decodeAddress(body, forKey: .address), p = try peripheral()
                let text = try body.decode(String.self, forKey: .route)
                guard let route = ConnectRoute(rawValue: text) else {
                    throw DecodingError.dataCorruptedError(forKey: .route, in: body, debugDescription: "unknown route \(text)")
                }
                let limits = try body.decodeIfPresent(Int.self, forKey: .mtu).map { WriteLimits(mtu: $0) }
                payload = kind == .connected ? .connected(peripheral: p, address: address, route: route, limits: limits)
                    : .restored(peripheral: p, address: address, route: route, limits: limits)
            case .failedToConnect:
                payload = .failedToConnect(peripheral: try peripheral(), reason: try Self.decodeFailure(body))
            case .disconnected:
                payload = .disconnected(peripheral: try peripheral(), reason: body.contains(.reason) ? try Self.decodeFailure(body) : nil)
            case .valueNotified:
                payload = .valueNotified(peripheral: try peripheral(), characteristic: try Self.decodeCharacteristic(body),
                                         value: try body.decode([UInt8].self, forKey: .value))
            case .subscriptionFailed:
                payload = .subscriptionFailed(peripheral: try peripheral(), characteristic: try Self.decodeCharacteristic(body),
                                              reason: try Self.decodeFailure(body))
            case .notificationState:
                payload = .notificationState(peripheral: try peripheral(), characteristic: try Self.decodeCharacteristic(body),
                                             notifying: try body.decode(Bool.self, forKey: .notifying),
                                             reason: body.contains(.reason) ? try Self.decodeFailure(body) : nil)
            case .connectionEvent:
                let text = try body.decode(String.self, forKey: .event)
                guard [Self.peerConnected, Self.peerDisconnected].contains(text) else {
                    throw DecodingError.dataCorruptedError(forKey: .event, in: body, debugDescription: "unknown connection event \(text)")
                }
                payload = .connectionEvent(peripheral: try peripheral(),
                                           address: body.contains(.address) ? try Self.decodeAddress(body, forKey: .address) : nil,
                                           connected: text == Self.peerConnected,
                                           reason: body.contains(.reason) ? try Self.decodeFailure(body) : nil)
            case .servicesChanged:
                payload = .servicesChanged(peripheral: try peripheral(), database: try body.decode(GattDatabase.self, forKey: .database))
            case .bondRemoved:
                payload = .bondRemoved(peripheral: try peripheral())
            case .pairingRequest:
                payload = .pairingRequest(peripheral: try peripheral(), request: try body.decode(UInt64.self, forKey: .request),
                                          kind: try body.decode(String.self, forKey: .kind), passkey: try body.decodeIfPresent(UInt32.self, forKey: .passkey))
            case .readRequest, .writeRequest, .subscribed, .unsubscribed, .readyToUpdate:
                payload = .peripheralManager(try Self.decodePeripheralManager(kind, body))
            case .transferProgress, .transferCompleted, .transferFailed:
                payload = .transfer(try Self.decodeTransfer(kind, body, peripheral: try peripheral()))
            case .adapterState:
                payload = .adapterState(adapter: try body.decode(String.self, forKey: .adapter), status: try Self.decodeAdapterStatus(body))
            case .nameUpdated:
                let u = try body.nestedContainer(keyedBy: Key.self, forKey: .update)
                let change = try u.nestedContainer(keyedBy: Key.self, forKey: .change)
                let names = try u.nestedContainer(keyedBy: Key.self, forKey: .names)
                func seen(_ key: Key) throws -> SeenName? {
                    guard names.contains(key) else { return nil }
                    let s = try names.nestedContainer(keyedBy: Key.self, forKey: key)
                    let at = if let ms = try s.decodeIfPresent(Int64.self, forKey: .seenAtMs) {
                        Date(unixMilliseconds: ms)
                    } else {
                        Date(timeIntervalSinceReferenceDate: try s.decode(Double.self, forKey: .seenAt))  // format 1
                    }
                    return SeenName(try s.decode(String.self, forKey: .value), seenAt: at)
                }
                var resolved: ResolvedName?
                if u.contains(.resolved) {
                    let r = try u.nestedContainer(keyedBy: Key.self, forKey: .resolved)
                    let text = try r.decode(String.self, forKey: .reason)
                    guard let reason = ResolvedName.Reason(rawValue: text) else {
                        throw DecodingError.dataCorruptedError(forKey: .reason, in: r, debugDescription: "unknown name reason \(text)")
                    }
                    resolved = .init(name: try r.decode(String.self, forKey: .name), source: try Self.source(r), reason: reason)
                }
                payload = .nameUpdated(peripheral: try peripheral(), update: NameUpdate(
                    change: NameChange(source: try Self.source(change), previous: try change.decodeIfPresent(String.self, forKey: .previous),
                                       current: try change.decode(String.self, forKey: .current)),
                    resolved: resolved, names: PeripheralNames(advertising: try seen(.advertising), gap: try seen(.gap))))
            }
        }

        /// The advertising data's fields of an `advertisement` object:
        /// `manufacturerData` always (an empty array when none), the others
        /// only when known and not empty.
        private static func encodeData(_ data: AdvertisingData, in ad: inout KeyedEncodingContainer<Key>) throws {
            var manufacturer = ad.nestedUnkeyedContainer(forKey: .manufacturerData)
            for (company, bytes) in data.manufacturerData.sorted(by: { $0.key < $1.key }) {
                try manufacturer.encode(company)
                try manufacturer.encode(bytes)
            }
            if !data.serviceData.isEmpty {
                var service = ad.nestedContainer(keyedBy: AnyKey.self, forKey: .serviceData)
                for (uuid, bytes) in data.serviceData { try service.encode(bytes, forKey: AnyKey(uuid.string)) }
            }
            try ad.encodeIfPresent(data.txPower, forKey: .txPower)
            try ad.encodeIfPresent(data.appearance, forKey: .appearance)
            try ad.encodeIfPresent(data.flags, forKey: .flags)
            if !data.raw.isEmpty {
                var raw = ad.nestedUnkeyedContainer(forKey: .advertisingData)
                for (type, bytes) in data.raw.sorted(by: { $0.key < $1.key }) {
                    try raw.encode(type)
                    try raw.encode(bytes)
                }
            }
        }

        private static func decodeData(_ ad: KeyedDecodingContainer<Key>) throws -> AdvertisingData {
            var data = AdvertisingData()
            var manufacturer = try ad.nestedUnkeyedContainer(forKey: .manufacturerData)
            while !manufacturer.isAtEnd {
                let company = try manufacturer.decode(UInt16.self)
                data.manufacturerData[company] = try manufacturer.decode([UInt8].self)
            }
            if ad.contains(.serviceData) {
                let service = try ad.nestedContainer(keyedBy: AnyKey.self, forKey: .serviceData)
                for key in service.allKeys {
                    guard let uuid = try? BluetoothUUID(parsing: key.stringValue) else {
                        throw DecodingError.dataCorruptedError(forKey: key, in: service, debugDescription: "not a UUID: \(key.stringValue)")
                    }
                    data.serviceData[uuid] = try service.decode([UInt8].self, forKey: key)
                }
            }
            data.txPower = try ad.decodeIfPresent(Int16.self, forKey: .txPower)
            data.appearance = try ad.decodeIfPresent(UInt16.self, forKey: .appearance)
            data.flags = try ad.decodeIfPresent([UInt8].self, forKey: .flags)
            if ad.contains(.advertisingData) {
                var raw = try ad.nestedUnkeyedContainer(forKey: .advertisingData)
                while !raw.isAtEnd {
                    let type = try raw.decode(UInt8.self)
                    data.raw[type] = try raw.decode([UInt8].self)
                }
            }
            return data
        }

        /// A coding key of any name (service data's UUIDs).
        struct AnyKey: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(_ string: String) { stringValue = string }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        // Peripheral role: `{"request": n, "central": "AA:..", "characteristic": {..},
        // "offset": n, "value": [..], "withResponse": bool, "kind": "request", "mtu": n}`,
        // each kind with its fields (`mtu` only when bluetoothd passed it).
        private static func decodeAdapterStatus(_ c: KeyedDecodingContainer<Key>) throws -> AdapterStatus {
            do {
                return AdapterStatus(try AdapterState(parsing: try c.decode(String.self, forKey: .state)),
                                     roles: try c.decode([String].self, forKey: .roles).map { try AdapterRole(parsing: $0) })
            } catch let error as DomainError {
                throw DecodingError.dataCorruptedError(forKey: .state, in: c, debugDescription: "\(error)")
            }
        }

        private static func encodePeripheral(_ id: PeripheralID, in c: inout KeyedEncodingContainer<Key>) throws {
            var p = c.nestedContainer(keyedBy: Key.self, forKey: .peripheral)
            try p.encode(id.uuid.uuidString, forKey: .uuid)
        }

        private static func decodePeripheral(_ c: KeyedDecodingContainer<Key>) throws -> PeripheralID {
            let p = try c.nestedContainer(keyedBy: Key.self, forKey: .peripheral)
            return try PeripheralID(parsing: p.decode(String.self, forKey: .uuid))
        }

        private static func encodeAddress(_ a: BluetoothAddress, in c: inout KeyedEncodingContainer<Key>, forKey key: Key) throws {
            var n = c.nestedContainer(keyedBy: Key.self, forKey: key)
            try n.encode(a.string, forKey: .address)
            try n.encode(a.kind.rawValue, forKey: .type)
        }

        private static func decodeAddress(_ c: KeyedDecodingContainer<Key>, forKey key: Key) throws -> BluetoothAddress {
            let n = try c.nestedContainer(keyedBy: Key.self, forKey: key)
            return try BluetoothAddress(parsing: n.decode(String.self, forKey: .address),
                                        kind: BluetoothAddress.Kind(parsing: n.decode(String.self, forKey: .type)))
        }

        static func encodeCharacteristic(_ key: CharacteristicKey, in c: inout KeyedEncodingContainer<Key>) throws {
            var n = c.nestedContainer(keyedBy: Key.self, forKey: .characteristic)
            try n.encode(key.characteristic.string, forKey: .characteristic)
            try n.encode(key.service.string, forKey: .service)
        }

        static func decodeCharacteristic(_ c: KeyedDecodingContainer<Key>) throws -> CharacteristicKey {
            let n = try c.nestedContainer(keyedBy: Key.self, forKey: .characteristic)
            return CharacteristicKey(service: try BluetoothUUID(parsing: n.decode(String.self, forKey: .service)),
                                     characteristic: try BluetoothUUID(parsing: n.decode(String.self, forKey: .characteristic)))
        }

        static func encodeFailure(_ f: ConnectionFailure, in c: inout KeyedEncodingContainer<Key>) throws {
            var r = c.nestedContainer(keyedBy: Key.self, forKey: .reason)
            try r.encode(f.errorName, forKey: .errorName)
            try r.encode(f.failureClass.rawValue, forKey: .failureClass)
            try r.encode(f.message, forKey: .message)
        }

        static func decodeFailure(_ c: KeyedDecodingContainer<Key>) throws -> ConnectionFailure {
            let r = try c.nestedContainer(keyedBy: Key.self, forKey: .reason)
            let text = try r.decode(String.self, forKey: .failureClass)
            guard let failureClass = FailureClass(rawValue: text) else {
                throw DecodingError.dataCorruptedError(forKey: .failureClass, in: r, debugDescription: "unknown failure class \(text)")
            }
            return ConnectionFailure(failureClass, errorName: try r.decode(String.self, forKey: .errorName),
                                     message: try r.decode(String.self, forKey: .message))
        }

        private static func source(_ c: KeyedDecodingContainer<Key>) throws -> NameSource {
            let text = try c.decode(String.self, forKey: .source)
            guard let source = NameSource(rawValue: text) else {
                throw DecodingError.dataCorruptedError(forKey: .source, in: c, debugDescription: "unknown name source \(text)")
            }
            return source
        }
    }
}
