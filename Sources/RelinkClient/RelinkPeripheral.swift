public import DBus
public import RelinkModel
import RelinkAPI

/// A peripheral relinkd knows (`org.relink.Peripheral1` properties).
public struct RelinkPeripheral: Sendable, Hashable {
    /// Its object, `/org/relink/peripheral/<uuid>`.
    public var object: String
    /// The peripheral UUID.
    public var id: String
    /// Its Bluetooth address, `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// `public` or `random`.
    public var addressType: String
    /// The adapter it is reached through, e.g. `hci0`.
    public var adapter: String
    /// The Local Name of the latest advertisement or scan response, "" when never seen.
    public var advertisingName: String
    /// Unix milliseconds, 0 = never.
    public var advertisingNameSeen: UInt64
    /// The GAP Device Name (0x2A00) read over a connection, "" when never read.
    public var gapName: String
    /// When the GAP name was read, Unix milliseconds; 0 = never.
    public var gapNameSeen: UInt64
    /// The resolved name, by the identifier's name rule.
    public var name: String
    /// "gap", "advertising" or "none".
    public var nameSource: String
    /// Whether BlueZ has a link to it now.
    public var connected: Bool
    /// dBm, 0 when unknown.
    public var rssi: Int16
    /// Service UUIDs known for it (asked for by intents, or seen).
    public var services: [String]
    /// Unix milliseconds.
    public var lastSeen: UInt64
    /// The link's ATT MTU; 0 while not connected with services resolved.
    public var mtu: UInt16
    /// The largest value of a write with response (512, a long write); 0 while not connected.
    public var maximumWriteWithResponse: UInt16
    /// The largest value of a write without response (MTU − 3); 0 while not connected.
    public var maximumWriteWithoutResponse: UInt16
    /// BlueZ's `Paired` (`Central1.Pair`).
    public var paired: Bool
    /// BlueZ's `Bonded`: the keys are stored and outlive restarts.
    public var bonded: Bool
    /// BlueZ's `Trusted`.
    public var trusted: Bool

    /// Decodes the properties of one Peripheral1 object.
    /// - Throws: ``RelinkClientError`` (`Failed`) when `Id` is missing or a
    ///   property has another type than documented.
    public init(object: String, properties: [String: DBusValue]) throws(RelinkClientError) {
        let r = PropertyReader("Peripheral1", properties)
        self.object = object
        id = try r.required(Peripheral1Property.id.rawValue)
        address = try r.value(Peripheral1Property.address.rawValue, default: "")
        addressType = try r.value(Peripheral1Property.addressType.rawValue, default: "")
        adapter = try r.value(Peripheral1Property.adapter.rawValue, default: "")
        advertisingName = try r.value(Peripheral1Property.advertisingName.rawValue, default: "")
        advertisingNameSeen = try r.value(Peripheral1Property.advertisingNameSeen.rawValue, default: 0)
        gapName = try r.value(Peripheral1Property.gapName.rawValue, default: "")
        gapNameSeen = try r.value(Peripheral1Property.gapNameSeen.rawValue, default: 0)
        name = try r.value(Peripheral1Property.name.rawValue, default: "")
        nameSource = try r.value(Peripheral1Property.nameSource.rawValue, default: "none")
        connected = try r.value(Peripheral1Property.connected.rawValue, default: false)
        rssi = try r.value(Peripheral1Property.rssi.rawValue, default: 0)
        services = try r.value(Peripheral1Property.services.rawValue, default: [])
        lastSeen = try r.value(Peripheral1Property.lastSeen.rawValue, default: 0)
        mtu = try r.value(Peripheral1Property.mtu.rawValue, default: 0)
        maximumWriteWithResponse = try r.value(Peripheral1Property.maximumWriteWithResponse.rawValue, default: 0)
        maximumWriteWithoutResponse = try r.value(Peripheral1Property.maximumWriteWithoutResponse.rawValue, default: 0)
        paired = try r.value(Peripheral1Property.paired.rawValue, default: false)
        bonded = try r.value(Peripheral1Property.bonded.rawValue, default: false)
        trusted = try r.value(Peripheral1Property.trusted.rawValue, default: false)
    }

    /// The largest value one write of `type` may carry on the link now
    /// (CoreBluetooth's `maximumWriteValueLength(for:)`): 512 with response
    /// (a long write), MTU − 3 without; 0 while not connected (as the
    /// properties were read: read the peripheral again after `connected`).
    public func maximumWriteValueLength(for type: RelinkWriteType) -> Int {
        switch type {
        case .withResponse: Int(maximumWriteWithResponse)
        case .withoutResponse: Int(maximumWriteWithoutResponse)
        }
    }
}

/// The type of a characteristic write (CoreBluetooth's `CBCharacteristicWriteType`).
public enum RelinkWriteType: Sendable, Hashable, CaseIterable {
    /// A Write Request: the peripheral confirms it (longer values by the long-write procedure).
    case withResponse
    /// A Write Command: not confirmed, one ATT packet (MTU − 3 bytes at most).
    case withoutResponse
}

/// The properties of an identifier's `org.relink.Central1` object.
public struct RelinkCentralProperties: Sendable, Hashable {
    /// The restore identifier.
    public var identifier: String
    /// The Unix user that owns it.
    public var owner: UInt32
    /// `gap` or `advertising`: which name is resolved as the peripheral's.
    public var nameRule: String
    /// Whether the identifier has a scan.
    public var scanning: Bool
    /// The scan's services (empty: any).
    public var scanServices: [String]
    /// The scan's `allow_duplicates`.
    public var allowDuplicates: Bool
    /// The scan's manufacturer- and service-data prefixes (`ScanOptions`).
    public var scanDataPrefixes: Set<AdvertisingDataPrefix>
    /// The newest event's sequence number (0: none).
    public var lastSequence: UInt64
    /// Events at or below it were acknowledged or dropped.
    public var acknowledged: UInt64
    /// Events dropped by the bound since the identifier was created.
    public var droppedEvents: UInt64
    /// The outbox bound.
    public var eventLimit: UInt32

    /// - Throws: ``RelinkClientError`` (`Failed`) when a property is
    ///   missing or has another type than documented.
    public init(_ properties: [String: DBusValue]) throws(RelinkClientError) {
        let r = PropertyReader("Central1", properties)
        identifier = try r.required(Central1Property.identifier.rawValue)
        owner = try r.required(Central1Property.owner.rawValue)
        nameRule = try r.value(Central1Property.nameRule.rawValue, default: "gap")
        scanning = try r.value(Central1Property.scanning.rawValue, default: false)
        scanServices = try r.value(Central1Property.scanServices.rawValue, default: [])
        allowDuplicates = try r.value(Central1Property.allowDuplicates.rawValue, default: false)
        let scanOptions = try r.value(Central1Property.scanOptions.rawValue, default: [String: DBusValue]())
        do { scanDataPrefixes = try DataPrefixOptions.prefixes(in: scanOptions, keys: DataPrefixOptions.scanKeys) } catch {
            throw .badReply("Central1 ScanOptions", error)
        }
        lastSequence = try r.required(Central1Property.lastSequence.rawValue)
        acknowledged = try r.required(Central1Property.acknowledged.rawValue)
        droppedEvents = try r.value(Central1Property.droppedEvents.rawValue, default: 0)
        eventLimit = try r.value(Central1Property.eventLimit.rawValue, default: 0)
    }
}
