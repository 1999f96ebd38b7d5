#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The database's one JSON form: what the store keeps, what `GattDatabase`
// replies, what `Register`'s restored state and the `services-changed`
// event carry (docs/api/Central1.md, "The database's JSON"):
//
//   {"readAtMs": 1767225600000,
//    "services": [{"uuid": "…", "primary": true, "includes": ["…"],
//                  "characteristics": [{"uuid": "…", "flags": ["read", "notify"],
//                                       "properties": ["read", "notify"],
//                                       "descriptors": [{"uuid": "…", "flags": ["read"]}]}]}]}
//
// UUIDs lower-case 128-bit; `properties` are CoreBluetooth's names, written
// for readers and recomputed from `flags` when read back.

extension GattDatabase: Codable {
    private enum Key: String, CodingKey {
        case readAtMs, services, uuid, primary, includes, characteristics, flags, properties, descriptors
    }

    /// Encodes the documented JSON form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(readAt.unixMilliseconds, forKey: .readAtMs)
        var list = c.nestedUnkeyedContainer(forKey: .services)
        for service in services {
            var s = list.nestedContainer(keyedBy: Key.self)
            try s.encode(service.uuid, forKey: .uuid)
            try s.encode(service.isPrimary, forKey: .primary)
            try s.encode(service.includedServices, forKey: .includes)
            var chars = s.nestedUnkeyedContainer(forKey: .characteristics)
            for characteristic in service.characteristics {
                var ch = chars.nestedContainer(keyedBy: Key.self)
                try ch.encode(characteristic.uuid, forKey: .uuid)
                try ch.encode(characteristic.flags, forKey: .flags)
                try ch.encode(characteristic.properties.names, forKey: .properties)
                var descs = ch.nestedUnkeyedContainer(forKey: .descriptors)
                for descriptor in characteristic.descriptors {
                    var d = descs.nestedContainer(keyedBy: Key.self)
                    try d.encode(descriptor.uuid, forKey: .uuid)
                    try d.encode(descriptor.flags, forKey: .flags)
                }
            }
        }
    }

    /// Decodes the documented JSON form.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        readAt = Date(unixMilliseconds: try c.decode(Int64.self, forKey: .readAtMs))
        var list = try c.nestedUnkeyedContainer(forKey: .services)
        var services: [Service] = []
        while !list.isAtEnd {
            let s = try list.nestedContainer(keyedBy: Key.self)
            var chars = try s.nestedUnkeyedContainer(forKey: .characteristics)
            var characteristics: [Characteristic] = []
            while !chars.isAtEnd {
                let ch = try chars.nestedContainer(keyedBy: Key.self)
                var descs = try ch.nestedUnkeyedContainer(forKey: .descriptors)
                var descriptors: [Descriptor] = []
                while !descs.isAtEnd {
                    let d = try descs.nestedContainer(keyedBy: Key.self)
                    descriptors.append(Descriptor(uuid: try d.decode(BluetoothUUID.self, forKey: .uuid),
                                                  flags: try d.decode([String].self, forKey: .flags)))
                }
                characteristics.append(Characteristic(uuid: try ch.decode(BluetoothUUID.self, forKey: .uuid),
                                                      flags: try ch.decode([String].self, forKey: .flags), descriptors: descriptors))
            }
            services.append(Service(uuid: try s.decode(BluetoothUUID.self, forKey: .uuid), isPrimary: try s.decode(Bool.self, forKey: .primary),
                                    includedServices: try s.decode([BluetoothUUID].self, forKey: .includes),
                                    characteristics: characteristics))
        }
        self.services = services
    }

    /// The compact JSON (sorted keys).
    public var json: String { compactJSON(self, fallback: "{}") }

    /// Reads the JSON form.
    /// - Throws: `DecodingError` when `json` is not a database.
    public init(json: String) throws {
        self = try JSONDecoder().decode(GattDatabase.self, from: Data(json.utf8))
    }
}
