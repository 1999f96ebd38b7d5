public import DBus
public import RelinkModel
import RelinkAPI

/// What `Manager1.Register` returns (CoreBluetooth's `willRestoreState`):
/// the identifier's peripherals, scan and event counters, handed out
/// before any event.
public struct RelinkRestoredState: Sendable, Hashable {
    /// One peripheral with a connection intent or a subscription.
    public struct Peripheral: Sendable, Hashable {
        /// Its object, `/org/relink/peripheral/<uuid>`.
        public var object: String
        /// The peripheral UUID.
        public var id: String
        /// Its Bluetooth address, `AA:BB:CC:DD:EE:FF`.
        public var address: String
        /// The intent's state as relinkd names it (`connecting`, `connected`,
        /// `backing-off`, `failed`, `trying-knownIdentifier`, ...; `none` for a
        /// peripheral only subscribed to): see docs/api/Manager1.md.
        public var state: String
        /// Known service UUIDs.
        public var services: [String]
        /// Subscribed characteristics.
        public var subscriptions: [Characteristic]
        /// The resolved name ("" when none).
        public var name: String
        /// The subscribed characteristics whose notifications flow on the
        /// link now (CoreBluetooth's `isNotifying`); changes come as
        /// `notification-state` events. Empty from a relinkd that does not send it.
        public var notifying: [Characteristic] = []
        /// The GATT database relinkd read last from it, with when
        /// (``RelinkModel/GattDatabase/readAt``); nil when it never had one
        /// (CoreBluetooth's restored peripherals carry their discovered services).
        public var gattDatabase: GattDatabase? = nil
    }

    /// A characteristic of a service.
    public struct Characteristic: Sendable, Hashable {
        /// The service UUID.
        public var service: String
        /// The characteristic UUID, within `service`.
        public var characteristic: String

        /// A characteristic by its two UUIDs, as relinkd spells them.
        public init(service: String, characteristic: String) {
            self.service = service
            self.characteristic = characteristic
        }
    }

    /// True when the `Register` call created the identifier.
    public var isNew: Bool
    /// Each peripheral with a connection intent or a subscription, sorted by `id`.
    public var peripherals: [Peripheral]
    /// The services of the identifier's scan (empty: any, or no scan).
    public var scanServices: [String]
    /// The scan's `allow_duplicates`.
    public var allowDuplicates: Bool
    /// The scan's manufacturer- and service-data prefixes (`scan_options`).
    public var scanDataPrefixes: Set<AdvertisingDataPrefix>
    /// Whether the identifier has a scan.
    public var scanning: Bool
    /// The identifier's connection-event registration (`connection_events`),
    /// nil when it has none: the services and peripherals it matches, and
    /// the peripherals it was last told connected (`peer-connected`, no
    /// `peer-disconnected` since).
    public var connectionEvents: ConnectionEvents?

    /// A connection-event registration as `Register` restores it.
    public struct ConnectionEvents: Sendable, Hashable {
        /// The service UUIDs it matches.
        public var services: [String]
        /// The peripheral UUIDs it matches.
        public var peripherals: [String]
        /// The peripherals it was last told connected.
        public var connected: [String]

        /// A registration as `Register` restores it.
        public init(services: [String], peripherals: [String], connected: [String]) {
            self.services = services
            self.peripherals = peripherals
            self.connected = connected
        }
    }
    /// Newest stored event.
    public var lastSequence: UInt64
    /// Everything up to this was acknowledged (and deleted).
    public var acknowledged: UInt64
    /// Events dropped because the outbox was full.
    public var droppedEvents: UInt64
    /// The dropped sequence numbers not yet acknowledged past (nil: none).
    /// Other gaps in the numbers are skips after a crash of relinkd, not
    /// losses of stored events (docs/api/events.md, "Sequence numbers").
    public var droppedRange: ClosedRange<UInt64>?
    /// The state and roles of relinkd's adapter when it answered (CoreBluetooth's
    /// `central.state`); later changes come as `adapter-state` events. Nil
    /// from a relinkd that does not send it, or with a state this library
    /// does not know.
    public var adapterStatus: AdapterStatus?
    /// The identifier's peripheral role (`peripheral_manager`): published
    /// services, the advertisement, cached values and subscribed centrals
    /// (CoreBluetooth's `peripheralManager:willRestoreState:`). Nil from a
    /// relinkd without the peripheral role.
    public var peripheralManager: PeripheralManagerRecord?
    /// Why relinkd had this program started (`launch_reason`, like
    /// CoreBluetooth's `UIApplicationLaunchOptionsBluetoothCentralsKey`): the
    /// identifiers and event kinds that asked for it. Nil when the program
    /// was not started by relinkd (docs/relaunch.md).
    public var launchReason: LaunchReason?

    /// Decodes the `restored` dictionary.
    /// - Throws: ``RelinkClientError`` (`Failed`) when a key relinkd
    ///   always sends is missing or has another type.
    public init(_ restored: [String: DBusValue]) throws(RelinkClientError) {
        let r = PropertyReader("Register", restored)
        isNew = try r.required("new", Bool.self)
        var list: [Peripheral] = []
        for entry in try r.required("peripherals", [[String: DBusValue]].self) {
            let p = PropertyReader("Register (peripherals)", entry)
            let object: String
            if let path = try p.optional("object", ObjectPath.self) { object = path.rawValue } else { object = try p.value("object", default: "") }
            list.append(Peripheral(
                object: object, id: try p.required("id"), address: try p.value("address", default: ""),
                state: try p.value("state", default: ""), services: try p.value("services", default: []),
                subscriptions: try p.value("subscriptions", default: [StringPair]()).map {
                    Characteristic(service: $0.first, characteristic: $0.second)
                },
                name: try p.value("name", default: ""),
                notifying: try p.value("notifying", default: [StringPair]()).map {
                    Characteristic(service: $0.first, characteristic: $0.second)
                },
                gattDatabase: try (p.optional("gatt_database", String.self)).map { json throws(RelinkClientError) in
                    do { return try GattDatabase(json: json) } catch { throw .badReply("Register (gatt_database)", "\(error)") }
                }))
        }
        peripherals = list
        scanServices = try r.value("scan_services", default: [])
        let scanOptions = try r.value("scan_options", default: [String: DBusValue]())
        allowDuplicates = try PropertyReader("Register (scan_options)", scanOptions).value("allow_duplicates", default: false)
        do { scanDataPrefixes = try DataPrefixOptions.prefixes(in: scanOptions, keys: DataPrefixOptions.scanKeys) } catch {
            throw .badReply("Register (scan_options)", error)
        }
        scanning = try r.value("scanning", default: false)
        let events = PropertyReader("Register (connection_events)", try r.value("connection_events", default: [String: DBusValue]()))
        let services: [String] = try events.value("services", default: []), named: [String] = try events.value("peripherals", default: [])
        connectionEvents = services.isEmpty && named.isEmpty ? nil
            : ConnectionEvents(services: services, peripherals: named, connected: try events.value("connected", default: []))
        lastSequence = try r.required("last_sequence")
        acknowledged = try r.required("acknowledged")
        droppedEvents = try r.value("dropped_events", default: 0)
        if case .structure(let bounds)? = restored["dropped_range"]?.unwrapped, bounds.count == 2,
           case .uint64(let first) = bounds[0], case .uint64(let last) = bounds[1], first > 0, first <= last {
            droppedRange = first...last
        } else {
            droppedRange = nil
        }
        adapterStatus = Self.adapterStatus(state: try r.optional("adapter_state"), roles: try r.value("adapter_roles", default: []))
        peripheralManager = try (r.optional("peripheral_manager", String.self)).map { json throws(RelinkClientError) in
            try RelinkManager.peripheralManagerRecord(json, "Register (peripheral_manager)")
        }
        launchReason = restored["launch_reason"].flatMap { LaunchOptions.reason(in: $0.unwrapped) }
    }

    /// An adapter status from its wire names: nil without a state or with
    /// one this library does not know; roles it does not know are left out.
    static func adapterStatus(state: String?, roles: [String]) -> AdapterStatus? {
        guard let state, let known = AdapterState(rawValue: state) else { return nil }
        return AdapterStatus(known, roles: AdapterRole.parsing(roles))
    }
}
