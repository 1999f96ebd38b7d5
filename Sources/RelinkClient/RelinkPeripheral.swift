import DBus
import RelinkModel

/// A peripheral relinkd knows (`org.relink.Peripheral1` properties).
public struct RelinkPeripheral: Sendable, Hashable {
    /// Its object, `/org/relink/peripheral/<uuid>`.
    public var object: String
    /// The peripheral UUID.
    public var id: String
    public var address: String
    public var addressType: String
    public var adapter: String
    public var advertisingName: String
    /// Unix milliseconds, 0 = never.
    public var advertisingNameSeen: UInt64
    public var gapName: String
    public var gapNameSeen: UInt64
    /// The resolved name, by the identifier's name rule.
    public var name: String
    /// "gap", "advertising" or "none".
    public var nameSource: String
    public var connected: Bool
    /// dBm, 0 when unknown.
    public var rssi: Int16
    public var services: [String]
    /// Unix milliseconds.
    public var lastSeen: UInt64

    /// Decodes the properties of one Peripheral1 object.
    /// - Throws: ``RelinkClientError`` (`Failed`) when `Id` is missing or a
    ///   property has another type than documented.
    public init(object: String, properties: [String: DBusValue]) throws(RelinkClientError) {
        let r = PropertyReader("Peripheral1", properties)
        self.object = object
        id = try r.required("Id")
        address = try r.value("Address", default: "")
        addressType = try r.value("AddressType", default: "")
        adapter = try r.value("Adapter", default: "")
        advertisingName = try r.value("AdvertisingName", default: "")
        advertisingNameSeen = try r.value("AdvertisingNameSeen", default: 0)
        gapName = try r.value("GAPName", default: "")
        gapNameSeen = try r.value("GAPNameSeen", default: 0)
        name = try r.value("Name", default: "")
        nameSource = try r.value("NameSource", default: "none")
        connected = try r.value("Connected", default: false)
        rssi = try r.value("RSSI", default: 0)
        services = try r.value("Services", default: [])
        lastSeen = try r.value("LastSeen", default: 0)
    }
}

/// The properties of an identifier's `org.relink.Central1` object.
public struct RelinkCentralProperties: Sendable, Hashable {
    public var identifier: String
    /// The Unix user that owns it.
    public var owner: UInt32
    public var nameRule: String
    public var scanning: Bool
    public var scanServices: [String]
    public var allowDuplicates: Bool
    public var lastSequence: UInt64
    public var acknowledged: UInt64
    public var droppedEvents: UInt64
    /// The outbox bound.
    public var eventLimit: UInt32

    /// - Throws: ``RelinkClientError`` (`Failed`) when a property is
    ///   missing or has another type than documented.
    public init(_ properties: [String: DBusValue]) throws(RelinkClientError) {
        let r = PropertyReader("Central1", properties)
        identifier = try r.required("Identifier")
        owner = try r.required("Owner")
        nameRule = try r.value("NameRule", default: "gap")
        scanning = try r.value("Scanning", default: false)
        scanServices = try r.value("ScanServices", default: [])
        allowDuplicates = try r.value("AllowDuplicates", default: false)
        lastSequence = try r.required("LastSequence")
        acknowledged = try r.required("Acknowledged")
        droppedEvents = try r.value("DroppedEvents", default: 0)
        eventLimit = try r.value("EventLimit", default: 0)
    }
}
