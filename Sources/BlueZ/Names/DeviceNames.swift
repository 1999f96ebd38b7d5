public import struct Foundation.Date
import RelinkModel

/// A peripheral's two names, each with when it was last seen.
///
/// BlueZ keeps one `Name` slot per device (see `bluez-facts.md`): the Local
/// Name of advertisements while discovering, and the GAP Device Name (0x2A00)
/// read by its GAP plugin after a connection. Last writer wins, so the layer
/// tells them apart itself; ``NameTracker`` does that.
public struct DeviceNames: Sendable, Hashable, Codable {
    /// The Local Name from the advertisement or scan response.
    public var advertisingName: String?
    public var advertisingNameSeen: Date?
    /// The GAP Device Name (characteristic 0x2A00 of service 0x1800).
    public var gapName: String?
    public var gapNameSeen: Date?
    /// Where the GAP name came from.
    public var gapNameSource: GAPNameSource?

    public init(advertisingName: String? = nil, advertisingNameSeen: Date? = nil,
                gapName: String? = nil, gapNameSeen: Date? = nil, gapNameSource: GAPNameSource? = nil) {
        self.advertisingName = advertisingName
        self.advertisingNameSeen = advertisingNameSeen
        self.gapName = gapName
        self.gapNameSeen = gapNameSeen
        self.gapNameSource = gapNameSource
    }

    /// Takes each name of `known` this one lacks, with when it was seen
    /// (and the GAP name's source).
    public mutating func fillGaps(from known: DeviceNames) {
        if advertisingName == nil, let name = known.advertisingName {
            advertisingName = name
            advertisingNameSeen = known.advertisingNameSeen
        }
        if gapName == nil, let name = known.gapName {
            gapName = name
            gapNameSeen = known.gapNameSeen
            gapNameSource = known.gapNameSource
        }
    }

    /// How a GAP name was learnt.
    public enum GAPNameSource: String, Sendable, Hashable, Codable {
        /// Read from the exported 0x2A00 characteristic (BlueZ ≥ 5.80,
        /// `ExportClaimedServices`).
        case characteristic
        /// Inferred from the `Name` change that followed `Connected=true`
        /// (BlueZ ≤ 5.79 hides the GAP service).
        case nameAfterConnect
    }
}
