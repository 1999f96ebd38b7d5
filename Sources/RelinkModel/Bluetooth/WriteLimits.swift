/// The largest value a central may write to a connected peripheral, per
/// write type (CoreBluetooth's `maximumWriteValueLength(for:)`), from the
/// link's negotiated ATT MTU.
///
/// A write with response may be longer than one ATT packet: BlueZ then uses
/// the long-write procedure (prepare and execute writes), up to the longest
/// attribute value, 512 bytes. A write without response is one ATT Write
/// Command and must fit in one packet: MTU − 3 bytes (the opcode and the
/// handle take 3).
public struct WriteLimits: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The longest attribute value (Core spec Vol 3 Part F 3.2.9), the bound
    /// of a long write.
    public static let maximumAttributeLength = 512
    /// The ATT MTU of a link before any exchange (LE: 23).
    public static let defaultMTU = 23
    /// The largest ATT MTU BlueZ negotiates (517: a 512-byte value plus the
    /// 5-byte header of the largest PDU).
    public static let largestMTU = 517

    /// The link's ATT MTU, within ``defaultMTU``...``largestMTU``.
    public let mtu: Int

    /// The limits of a link whose ATT MTU is `mtu` (clamped into the range
    /// BlueZ can report: a value out of it is a peer's or bluetoothd's bug).
    public init(mtu: Int) {
        self.mtu = min(max(mtu, Self.defaultMTU), Self.largestMTU)
    }

    /// Decodes `{"mtu": n}`, clamped as ``init(mtu:)`` does.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(mtu: try c.decode(Int.self, forKey: .mtu))
    }

    /// Largest value of a write with response (long writes included).
    public var withResponse: Int { Self.maximumAttributeLength }
    /// Largest value of a write without response: MTU − 3.
    public var withoutResponse: Int { min(mtu - 3, Self.maximumAttributeLength) }

    /// The largest value for the write type.
    public func maximum(withResponse: Bool) -> Int { withResponse ? self.withResponse : withoutResponse }

    /// `mtu=247 with-response=512 without-response=244`.
    public var description: String { "mtu=\(mtu) with-response=\(withResponse) without-response=\(withoutResponse)" }
}
