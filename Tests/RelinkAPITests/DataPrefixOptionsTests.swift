import DBus
@testable import RelinkAPI
import RelinkModel
import Testing

/// Data prefixes as `Scan` and `Connect` options: what relinkd reads is
/// what the client library writes; bad ones are `InvalidArguments`.
@Suite("Data prefix options")
struct DataPrefixOptionsTests {
    static func entry(_ key: DBusValue, _ bytes: [UInt8], _ mask: [UInt8] = []) -> DBusValue {
        .structure([key, .array(.byte, bytes.map { .byte($0) }), .array(.byte, mask.map { .byte($0) })])
    }

    @Test func whatTheClientWritesRelinkdReads() throws {
        let prefixes: Set<AdvertisingDataPrefix> = [IBeacon.scanPrefix, try AdvertisingDataPrefix(parsing: "manufacturer:ffff:52/f0"),
                                                    try AdvertisingDataPrefix(parsing: "service:feaa:10")]
        for keys in [DataPrefixOptions.scanKeys, DataPrefixOptions.matchKeys] {
            let options = DataPrefixOptions.options(prefixes, keys: keys)
            #expect(Set(options.keys) == Set(keys.values))
            #expect(try DataPrefixOptions.prefixes(in: options, keys: keys) == prefixes)
        }
        #expect(DataPrefixOptions.options([], keys: DataPrefixOptions.scanKeys).isEmpty)
    }

    @Test func aPrefixLongerThanAnyAdvertisementIsRefusedNamingTheOption() {
        let long = DBusValue.array(.structure([.uint16, .array(.byte), .array(.byte)]), [Self.entry(.uint16(0x004C), Array(repeating: 0, count: 253))])
        #expect {
            try DataPrefixOptions.prefixes(in: ["manufacturer_data": long], keys: DataPrefixOptions.scanKeys)
        } throws: { error in
            guard let error = error as? RelinkError, error.code == .invalidArguments else { return false }
            return error.message.contains("manufacturer_data") && error.message.contains("252")
        }
    }

    @Test func badPrefixesAreInvalidArguments() {
        let serviceType = DBusType.array(.structure([.string, .array(.byte), .array(.byte)]))
        let manufacturerType = DBusType.array(.structure([.uint16, .array(.byte), .array(.byte)]))
        let bad: [[String: DBusValue]] = [
            ["service_data": .array(serviceType, [Self.entry(.string("not-a-uuid"), [1])])],
            ["service_data": .array(serviceType, [Self.entry(.string("feaa"), [1, 2], [0xFF])])],  // mask of another length
            ["manufacturer_data": .array(.string, [.string("0x004c:0215")])],  // the text form is not the option's type
            ["manufacturer_data": .array(manufacturerType, (0..<17).map { Self.entry(.uint16(UInt16($0)), []) })],  // too many
        ]
        for options in bad {
            #expect(throws: RelinkError.self, "\(options)") { try DataPrefixOptions.prefixes(in: options, keys: DataPrefixOptions.scanKeys) }
        }
    }
}
