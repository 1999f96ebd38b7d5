#if canImport(FoundationEssentials)
public import struct FoundationEssentials.UUID
#else
public import struct Foundation.UUID
#endif

/// An iBeacon frame: Apple's manufacturer data (company ID 0x004C) of type
/// 0x02 and length 0x15 (21 bytes): the proximity UUID (16 bytes), major and
/// minor (2 bytes each, big-endian) and the measured power (1 byte, signed:
/// the RSSI at 1 m, in dBm).
///
/// ```swift
/// if case .discovered(_, let advertisement) = event.payload, let beacon = IBeacon(advertisement.data) {
///     print(beacon.proximityUUID, beacon.major, beacon.minor, beacon.measuredPower)
/// }
/// ```
///
/// A scan for iBeacons only: ``scanPrefix`` as a data prefix of the scan.
public struct IBeacon: Sendable, Hashable, Codable {
    /// Apple's company identifier.
    public static let companyID: UInt16 = 0x004C
    /// The frame's type byte.
    public static let frameType: UInt8 = 0x02
    /// The frame's length byte: the bytes that follow it.
    public static let frameLength: UInt8 = 0x15
    /// The whole frame's length after the company ID: type, length and 21 bytes.
    public static let byteCount = 2 + Int(frameLength)

    /// The proximity UUID.
    public var proximityUUID: UUID
    /// The major number.
    public var major: UInt16
    /// The minor number.
    public var minor: UInt16
    /// The RSSI expected at 1 m, in dBm.
    public var measuredPower: Int8

    /// A beacon.
    public init(proximityUUID: UUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.proximityUUID = proximityUUID
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// Decodes Apple's manufacturer data (the bytes after the company ID);
    /// nil when it is not an iBeacon frame: shorter or longer than
    /// ``byteCount``, or another type or length byte.
    public init?(frame bytes: [UInt8]) {
        guard bytes.count == Self.byteCount, bytes[0] == Self.frameType, bytes[1] == Self.frameLength else { return nil }
        let u = Array(bytes[2..<18])
        proximityUUID = UUID(uuid: (u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]))
        major = UInt16(bytes[18]) << 8 | UInt16(bytes[19])
        minor = UInt16(bytes[20]) << 8 | UInt16(bytes[21])
        measuredPower = Int8(bitPattern: bytes[22])
    }

    /// The iBeacon in an advertisement's data; nil when it carries no
    /// manufacturer data of company 0x004C or that data is not an iBeacon frame.
    public init?(_ data: AdvertisingData) {
        guard let bytes = data.manufacturerData[Self.companyID] else { return nil }
        self.init(frame: bytes)
    }

    /// The frame (after the company ID), as a beacon advertises it.
    public var frame: [UInt8] {
        let u = proximityUUID.uuid
        return [Self.frameType, Self.frameLength,
                u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15,
                UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), UInt8(bitPattern: measuredPower)]
    }

    /// The data prefix that finds iBeacons: company 0x004C, `02 15`.
    public static var scanPrefix: AdvertisingDataPrefix {
        // Two bytes are within every limit: never throws.
        do { return try AdvertisingDataPrefix(.manufacturer(companyID), bytes: [frameType, frameLength]) } catch {
            preconditionFailure("\(error)")
        }
    }
}
