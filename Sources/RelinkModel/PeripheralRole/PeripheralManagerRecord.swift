import Foundation

/// What relinkd keeps durable of one identifier's peripheral role
/// (CoreBluetooth's `willRestoreState` for a `CBPeripheralManager`): the
/// services it published, what it advertises, the last values of
/// cacheable characteristics and the centrals subscribed to each
/// characteristic. relinkd registers the services and the advertisement
/// with bluetoothd from it by itself after any restart.
public struct PeripheralManagerRecord: Sendable, Hashable {
    /// The published services, in the order they were added.
    public var services: [PublishedService]
    /// The advertisement, while advertising.
    public var advertisement: PeripheralAdvertisement?
    /// The last value the program gave each cacheable characteristic.
    public var cachedValues: [CharacteristicKey: [UInt8]]
    /// The centrals subscribed to each characteristic, by the name
    /// bluetoothd gives them (the central's address, or
    /// ``unnamedCentral`` where bluetoothd does not say).
    public var subscribers: [CharacteristicKey: Set<String>]
    /// Not durable: whether relinkd, when it gave the record (`State`,
    /// `Register`), had the services registered and the advertisement
    /// waiting for an advertising instance of the controller (all taken).
    /// Never true in the store.
    public var advertisementWaiting = false

    /// The name of a central bluetoothd does not name (`StartNotify` has
    /// no `device` option in BlueZ 5.66).
    public static let unnamedCentral = "unknown"

    /// A record.
    public init(services: [PublishedService] = [], advertisement: PeripheralAdvertisement? = nil,
                cachedValues: [CharacteristicKey: [UInt8]] = [:], subscribers: [CharacteristicKey: Set<String>] = [:]) {
        self.services = services
        self.advertisement = advertisement
        self.cachedValues = cachedValues
        self.subscribers = subscribers
    }

    /// Whether there is nothing to keep (no services, not advertising).
    public var isEmpty: Bool { services.isEmpty && advertisement == nil }

    /// The published characteristic at `key`.
    public func characteristic(_ key: CharacteristicKey) -> PublishedCharacteristic? {
        services.first { $0.uuid == key.service }?.characteristic(key.characteristic)
    }
}

extension PeripheralManagerRecord: Codable {
    private enum Key: String, CodingKey { case services, advertisement, cachedValues, subscribers, service, characteristic, value, centrals
        case advertisementWaiting
    }

    /// Encodes the stored JSON form (keys sorted by the encoder's caller).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(services, forKey: .services)
        try c.encodeIfPresent(advertisement, forKey: .advertisement)
        if advertisementWaiting { try c.encode(true, forKey: .advertisementWaiting) }
        var values = c.nestedUnkeyedContainer(forKey: .cachedValues)
        for (key, value) in cachedValues.sorted(by: { $0.key < $1.key }) {
            var entry = values.nestedContainer(keyedBy: Key.self)
            try entry.encode(key.service, forKey: .service)
            try entry.encode(key.characteristic, forKey: .characteristic)
            try entry.encode(value, forKey: .value)
        }
        var subs = c.nestedUnkeyedContainer(forKey: .subscribers)
        for (key, centrals) in subscribers.sorted(by: { $0.key < $1.key }) where !centrals.isEmpty {
            var entry = subs.nestedContainer(keyedBy: Key.self)
            try entry.encode(key.service, forKey: .service)
            try entry.encode(key.characteristic, forKey: .characteristic)
            try entry.encode(centrals.sorted(), forKey: .centrals)
        }
    }

    /// Decodes the stored JSON form.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        var cached: [CharacteristicKey: [UInt8]] = [:]
        var values = try c.nestedUnkeyedContainer(forKey: .cachedValues)
        while !values.isAtEnd {
            let e = try values.nestedContainer(keyedBy: Key.self)
            cached[CharacteristicKey(service: try e.decode(BluetoothUUID.self, forKey: .service),
                                     characteristic: try e.decode(BluetoothUUID.self, forKey: .characteristic))] = try e.decode([UInt8].self, forKey: .value)
        }
        var subscribers: [CharacteristicKey: Set<String>] = [:]
        var subs = try c.nestedUnkeyedContainer(forKey: .subscribers)
        while !subs.isAtEnd {
            let e = try subs.nestedContainer(keyedBy: Key.self)
            subscribers[CharacteristicKey(service: try e.decode(BluetoothUUID.self, forKey: .service),
                                          characteristic: try e.decode(BluetoothUUID.self, forKey: .characteristic))] = Set(try e.decode([String].self, forKey: .centrals))
        }
        self.init(services: try c.decode([PublishedService].self, forKey: .services),
                  advertisement: try c.decodeIfPresent(PeripheralAdvertisement.self, forKey: .advertisement),
                  cachedValues: cached, subscribers: subscribers)
        advertisementWaiting = try c.decodeIfPresent(Bool.self, forKey: .advertisementWaiting) ?? false
    }

    /// The compact JSON the store keeps (sorted keys).
    public var json: String { compactJSON(self, fallback: "{}") }

    /// Reads the stored JSON form.
    /// - Throws: `DecodingError`.
    public init(json: String) throws {
        self = try JSONDecoder().decode(PeripheralManagerRecord.self, from: Data(json.utf8))
    }
}
