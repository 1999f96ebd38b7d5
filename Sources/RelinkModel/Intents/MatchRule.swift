/// How a scan (or an already-connected lookup) recognises the peripheral a
/// connection intent wants.
///
/// The rule: a candidate matches when its address equals ``address`` (address
/// type included), **or** when at least one advertisement criterion is set
/// and every set criterion holds:
/// * ``services``: the candidate offers all of them;
/// * ``localName``: its Local Name equals it exactly;
/// * ``manufacturerID``: it carries manufacturer data of that company;
/// * ``dataPrefixes``: its manufacturer or service data starts with each of
///   them (``AdvertisingDataPrefix``).
///
/// For a device with a fixed address the address alone is enough. For a
/// device whose address rotates (private random addresses, which BlueZ also
/// forgets about 30 s after disconnection) the stored address stops matching
/// and the advertisement criteria find it again; choose criteria specific
/// enough that no other device nearby meets them.
public struct MatchRule: Sendable, Hashable, Codable {
    public var address: BluetoothAddress?
    public var services: Set<BluetoothUUID>
    public var localName: String?
    /// The longest ``localName`` clients may give, in UTF-8 bytes (an
    /// advertisement holds less).
    public static let maximumLocalNameLength = 248
    public var manufacturerID: UInt16?
    /// Manufacturer- and service-data prefixes the advertisement must all match.
    public var dataPrefixes: Set<AdvertisingDataPrefix>

    public init(address: BluetoothAddress? = nil, services: Set<BluetoothUUID> = [], localName: String? = nil, manufacturerID: UInt16? = nil,
                dataPrefixes: Set<AdvertisingDataPrefix> = []) {
        self.address = address
        self.dataPrefixes = dataPrefixes
        self.services = services
        self.localName = localName
        self.manufacturerID = manufacturerID
    }

    /// True when some advertisement criterion is set.
    public var hasAdvertisementCriteria: Bool {
        !services.isEmpty || localName != nil || manufacturerID != nil || !dataPrefixes.isEmpty
    }

    /// Whether an advertisement comes from the wanted peripheral.
    public func matches(_ advertisement: Advertisement) -> Bool {
        matches(address: advertisement.address, name: advertisement.localName, services: advertisement.serviceUUIDs, data: advertisement.data)
    }

    /// Whether a connected device found by an already-connected lookup is
    /// the wanted peripheral (advertising data is not known there: a rule
    /// that requires manufacturer or service data only matches such a
    /// device by address).
    public func matches(_ candidate: ConnectedCandidate) -> Bool {
        matches(address: candidate.address, name: candidate.name, services: candidate.services, data: nil)
    }

    private func matches(address: BluetoothAddress, name: String?, services offered: Set<BluetoothUUID>, data: AdvertisingData?) -> Bool {
        if let wanted = self.address, wanted == address { return true }
        guard hasAdvertisementCriteria else { return false }
        if !services.isSubset(of: offered) { return false }
        if let localName, localName != name { return false }
        if let manufacturerID {
            guard let data, data.manufacturerData[manufacturerID] != nil else { return false }
        }
        if !dataPrefixes.isEmpty {
            guard let data, dataPrefixes.allSatisfy({ $0.matches(data) }) else { return false }
        }
        return true
    }
}
