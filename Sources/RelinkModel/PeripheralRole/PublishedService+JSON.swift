#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The peripheral role's JSON forms (docs/api/PeripheralManager1.md): what
// `AddService` and `StartAdvertising` take, what the store keeps and what
// `Register`'s restored state hands back.
//
//   service: {"uuid": "…", "primary": true, "includes": ["…"],
//             "characteristics": [{"uuid": "…", "properties": ["read", "notify"],
//                                  "permissions": ["readable"], "value": [1, 2],
//                                  "cacheable": false,
//                                  "descriptors": [{"uuid": "2901", "value": [72, 105]}]}]}
//   advertisement: {"localName": "…", "serviceUUIDs": ["…"],
//                   "manufacturerData": [{"company": 76, "data": [2, 21]}],
//                   "serviceData": [{"uuid": "…", "data": [1]}], "appearance": 961,
//                   "includeTxPower": false, "discoverable": true, "connectable": true}
//
// UUIDs are read in any form BluetoothUUID parses and written lower-case
// 128-bit; optional keys may be left out.

private enum PublishedKey: String, CodingKey {
    case uuid, primary, includes, characteristics, properties, permissions, value, cacheable, descriptors
    case localName, serviceUUIDs, manufacturerData, serviceData, appearance, includeTxPower, discoverable, connectable, company, data
}

/// Any key of a JSON object, to see the keys a form does not have.
private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The form's keyed container, after refusing a key it does not have: a
/// misspelt key (`"locaName"`) would otherwise be dropped in silence.
private func container(_ decoder: any Decoder, keys allowed: Set<PublishedKey>) throws -> KeyedDecodingContainer<PublishedKey> {
    let any = try decoder.container(keyedBy: AnyKey.self)
    for key in any.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
        guard let known = PublishedKey(stringValue: key.stringValue), allowed.contains(known) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: any, debugDescription: "unknown key \"\(key.stringValue)\"")
        }
    }
    return try decoder.container(keyedBy: PublishedKey.self)
}

private func decodeUUID<C: KeyedDecodingContainerProtocol>(_ c: C, _ key: C.Key) throws -> BluetoothUUID where C.Key == PublishedKey {
    let text = try c.decode(String.self, forKey: key)
    do { return try BluetoothUUID(parsing: text) } catch {
        throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: error.description)
    }
}

extension PublishedService: Codable {
    /// Encodes the documented JSON form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: PublishedKey.self)
        try c.encode(uuid, forKey: .uuid)
        try c.encode(isPrimary, forKey: .primary)
        try c.encode(includedServices, forKey: .includes)
        try c.encode(characteristics, forKey: .characteristics)
    }

    /// Decodes the documented JSON form.
    public init(from decoder: any Decoder) throws {
        let c = try container(decoder, keys: [.uuid, .primary, .includes, .characteristics])
        var includes: [BluetoothUUID] = []
        if c.contains(.includes) {
            for text in try c.decode([String].self, forKey: .includes) {
                do { includes.append(try BluetoothUUID(parsing: text)) } catch {
                    throw DecodingError.dataCorruptedError(forKey: .includes, in: c, debugDescription: error.description)
                }
            }
        }
        self.init(uuid: try decodeUUID(c, .uuid), isPrimary: try c.decodeIfPresent(Bool.self, forKey: .primary) ?? true,
                  includedServices: includes,
                  characteristics: try c.decodeIfPresent([PublishedCharacteristic].self, forKey: .characteristics) ?? [])
    }

    /// The compact JSON of one service (sorted keys), what `AddService` takes.
    public var json: String { compactJSON(self) }

    /// The compact JSON of a list of services (sorted keys).
    public static func json(_ services: [PublishedService]) -> String { compactJSON(services) }

    /// Reads one service's JSON.
    /// - Throws: ``DomainError/invalidPeripheralRole(_:)`` saying what is wrong.
    public init(json: String) throws(DomainError) {
        do { self = try JSONDecoder().decode(PublishedService.self, from: Data(json.utf8)) } catch {
            throw .invalidPeripheralRole("not a service: \(Self.reason(error))")
        }
    }

    /// Reads a list of services' JSON.
    /// - Throws: ``DomainError/invalidPeripheralRole(_:)`` saying what is wrong.
    public static func list(json: String) throws(DomainError) -> [PublishedService] {
        do { return try JSONDecoder().decode([PublishedService].self, from: Data(json.utf8)) } catch {
            throw .invalidPeripheralRole("not a list of services: \(reason(error))")
        }
    }

    static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context),
             DecodingError.keyNotFound(_, let context), DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }
}

extension PublishedCharacteristic: Codable {
    /// Encodes the documented JSON form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: PublishedKey.self)
        try c.encode(uuid, forKey: .uuid)
        try c.encode(properties.names, forKey: .properties)
        try c.encode(permissions.names, forKey: .permissions)
        try c.encodeIfPresent(value, forKey: .value)
        try c.encode(cacheable, forKey: .cacheable)
        try c.encode(descriptors, forKey: .descriptors)
    }

    /// Decodes the documented JSON form.
    public init(from decoder: any Decoder) throws {
        let c = try container(decoder, keys: [.uuid, .properties, .permissions, .value, .cacheable, .descriptors])
        let properties: CharacteristicProperties, permissions: AttributePermissions
        do {
            properties = try CharacteristicProperties(names: try c.decode([String].self, forKey: .properties))
            permissions = try AttributePermissions(names: try c.decodeIfPresent([String].self, forKey: .permissions) ?? [])
        } catch let error as DomainError {
            throw DecodingError.dataCorruptedError(forKey: .properties, in: c, debugDescription: error.description)
        }
        self.init(uuid: try decodeUUID(c, .uuid), properties: properties, permissions: permissions,
                  value: try c.decodeIfPresent([UInt8].self, forKey: .value),
                  cacheable: try c.decodeIfPresent(Bool.self, forKey: .cacheable) ?? false,
                  descriptors: try c.decodeIfPresent([PublishedDescriptor].self, forKey: .descriptors) ?? [])
    }
}

extension PublishedDescriptor: Codable {
    /// Encodes the documented JSON form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: PublishedKey.self)
        try c.encode(uuid, forKey: .uuid)
        try c.encode(value, forKey: .value)
        try c.encode(permissions.names, forKey: .permissions)
    }

    /// Decodes the documented JSON form (no `permissions`: `readable`).
    public init(from decoder: any Decoder) throws {
        let c = try container(decoder, keys: [.uuid, .value, .permissions])
        let permissions: AttributePermissions
        do {
            permissions = try c.decodeIfPresent([String].self, forKey: .permissions).map { names throws(DomainError) in try AttributePermissions(names: names) } ?? .readable
        } catch let error as DomainError {
            throw DecodingError.dataCorruptedError(forKey: .permissions, in: c, debugDescription: error.description)
        }
        self.init(uuid: try decodeUUID(c, .uuid), value: try c.decode([UInt8].self, forKey: .value), permissions: permissions)
    }
}

extension PeripheralAdvertisement: Codable {
    /// Encodes the documented JSON form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: PublishedKey.self)
        try c.encodeIfPresent(localName, forKey: .localName)
        try c.encode(serviceUUIDs, forKey: .serviceUUIDs)
        var m = c.nestedUnkeyedContainer(forKey: .manufacturerData)
        for (company, data) in self.data.manufacturerData.sorted(by: { $0.key < $1.key }) {
            var entry = m.nestedContainer(keyedBy: PublishedKey.self)
            try entry.encode(company, forKey: .company)
            try entry.encode(data, forKey: .data)
        }
        var s = c.nestedUnkeyedContainer(forKey: .serviceData)
        for (uuid, data) in self.data.serviceData.sorted(by: { $0.key < $1.key }) {
            var entry = s.nestedContainer(keyedBy: PublishedKey.self)
            try entry.encode(uuid, forKey: .uuid)
            try entry.encode(data, forKey: .data)
        }
        try c.encodeIfPresent(data.appearance, forKey: .appearance)
        try c.encode(includeTxPower, forKey: .includeTxPower)
        try c.encode(discoverable, forKey: .discoverable)
        try c.encode(connectable, forKey: .connectable)
    }

    /// Decodes the documented JSON form.
    public init(from decoder: any Decoder) throws {
        let c = try container(decoder, keys: [.localName, .serviceUUIDs, .manufacturerData, .serviceData, .appearance, .includeTxPower, .discoverable, .connectable])
        var services: [BluetoothUUID] = []
        for text in try c.decodeIfPresent([String].self, forKey: .serviceUUIDs) ?? [] {
            do { services.append(try BluetoothUUID(parsing: text)) } catch {
                throw DecodingError.dataCorruptedError(forKey: .serviceUUIDs, in: c, debugDescription: error.description)
            }
        }
        var manufacturer: [UInt16: [UInt8]] = [:]
        if c.contains(.manufacturerData) {
            var list = try c.nestedUnkeyedContainer(forKey: .manufacturerData)
            while !list.isAtEnd {
                let entry = try container(list.superDecoder(), keys: [.company, .data])
                let company = try entry.decode(UInt16.self, forKey: .company)
                guard manufacturer.updateValue(try entry.decode([UInt8].self, forKey: .data), forKey: company) == nil else {
                    throw DecodingError.dataCorruptedError(forKey: .company, in: entry, debugDescription: "company \(company) twice")
                }
            }
        }
        var serviceData: [BluetoothUUID: [UInt8]] = [:]
        if c.contains(.serviceData) {
            var list = try c.nestedUnkeyedContainer(forKey: .serviceData)
            while !list.isAtEnd {
                let entry = try container(list.superDecoder(), keys: [.uuid, .data])
                let service = try decodeUUID(entry, .uuid)
                guard serviceData.updateValue(try entry.decode([UInt8].self, forKey: .data), forKey: service) == nil else {
                    throw DecodingError.dataCorruptedError(forKey: .uuid, in: entry, debugDescription: "service data for \(service) twice")
                }
            }
        }
        let connectable = try c.decodeIfPresent(Bool.self, forKey: .connectable) ?? true
        self.init(localName: try c.decodeIfPresent(String.self, forKey: .localName), serviceUUIDs: services,
                  data: AdvertisingData(manufacturerData: manufacturer, serviceData: serviceData,
                                        appearance: try c.decodeIfPresent(UInt16.self, forKey: .appearance)),
                  includeTxPower: try c.decodeIfPresent(Bool.self, forKey: .includeTxPower) ?? false,
                  discoverable: try c.decodeIfPresent(Bool.self, forKey: .discoverable), connectable: connectable)
    }

    /// The compact JSON (sorted keys).
    public var json: String { compactJSON(self) }

    /// Reads the JSON form.
    /// - Throws: ``DomainError/invalidPeripheralRole(_:)`` saying what is wrong.
    public init(json: String) throws(DomainError) {
        do { self = try JSONDecoder().decode(PeripheralAdvertisement.self, from: Data(json.utf8)) } catch {
            throw .invalidPeripheralRole("not an advertisement: \(PublishedService.reason(error))")
        }
    }
}

/// Compact JSON with sorted keys, the model's one way to write its JSON
/// forms; they hold only strings, numbers, booleans and arrays, so encoding
/// cannot fail (`fallback` is for the impossible case).
func compactJSON<T: Encodable>(_ value: T, fallback: String = "null") -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return fallback }
    return String(decoding: data, as: UTF8.self)
}
