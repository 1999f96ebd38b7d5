import RelinkModel
/// relinkd's bus name and interface names (docs/api/README.md).
public enum RelinkNames {
    /// The well-known bus name relinkd owns on the system bus.
    public static let busName = "org.relink"
    /// The manager interface on `/org/relink`.
    public static let manager = "org.relink.Manager1"
    /// The interface of each restore identifier's object.
    public static let central = "org.relink.Central1"
    /// The interface of each peripheral's object.
    public static let peripheral = "org.relink.Peripheral1"
    /// The test-only control interface (off by default, root only).
    public static let control = "org.relink.Control1"
    /// A stream of writes without response (docs/api/WriteStream1.md).
    public static let writeStream = "org.relink.WriteStream1"
}

/// Members of `org.relink.Manager1` (docs/api/Manager1.md).
public enum Manager1Member: String, Sendable, CaseIterable {
    /// Registers (or attaches to) a restore identifier.
    case register = "Register"
    /// Forgets a restore identifier and everything it asked for.
    case unregister = "Unregister"
    /// The caller's identifiers and their objects.
    case listIdentifiers = "ListIdentifiers"
    /// Sets or removes an identifier's launch spec (docs/relaunch.md).
    case setLaunch = "SetLaunch"
}

/// Properties of `org.relink.Manager1`.
public enum Manager1Property: String, Sendable, CaseIterable {
    /// relinkd's version.
    case version = "Version"
    /// The adapter relinkd drives.
    case adapter = "Adapter"
    /// True once restoring after start-up is complete.
    case ready = "Ready"
    /// Whether the adapter is discovering.
    case discovering = "Discovering"
    /// A JSON summary of every connection (each one's state, attempt, last error).
    case status = "Status"
    /// The adapter's state (an `AdapterState` name, such as `poweredOn`).
    case adapterState = "AdapterState"
    /// The roles the adapter supports (`AdapterRole` names).
    case adapterRoles = "AdapterRoles"
}

/// Members of `org.relink.Central1` (docs/api/Central1.md).
public enum Central1Member: String, Sendable, CaseIterable {
    /// Starts (or replaces) the identifier's durable scan.
    case scan = "Scan"
    /// Stops the identifier's scan.
    case stopScan = "StopScan"
    /// Asks for a durable connection.
    case connect = "Connect"
    /// Cancels a connection intent.
    case cancel = "Cancel"
    /// Adds a durable subscription.
    case subscribe = "Subscribe"
    /// Removes a subscription.
    case unsubscribe = "Unsubscribe"
    /// Reads a characteristic on a live link.
    case read = "Read"
    /// Writes a characteristic on a live link.
    case write = "Write"
    /// Opens a stream of writes without response with back-pressure.
    case openWriteStream = "OpenWriteStream"
    /// Reads the outbox.
    case events = "Events"
    /// Acknowledges events through a sequence number.
    case ack = "Ack"
    /// Attaches the caller for live events.
    case watch = "Watch"
    /// Detaches the caller.
    case unwatch = "Unwatch"
    /// The signal that carries one event: `(t sequence, s kind, s payload)`.
    case event = "Event"
    /// The GATT database of a connected peripheral (JSON).
    case gattDatabase = "GattDatabase"
    /// Reads a descriptor on a live link.
    case readDescriptor = "ReadDescriptor"
    /// Writes a descriptor on a live link.
    case writeDescriptor = "WriteDescriptor"
    /// Starts a durable transfer (chunked writes to one characteristic).
    case startTransfer = "StartTransfer"
    /// Starts a durable transfer of a file's bytes (a descriptor).
    case startTransferFromFile = "StartTransferFromFile"
    /// Lists the identifier's transfers under way.
    case transfers = "Transfers"
    /// Cancels a transfer.
    case cancelTransfer = "CancelTransfer"
    /// Pairs with (bonds to) a peripheral the identifier has a connection intent on, and trusts it.
    case pair = "Pair"
    /// Removes bluetoothd's bond with a peripheral no identifier uses any more.
    case unpair = "Unpair"
    /// `Pair` with an agent I/O capability: the agent's requests go to the client.
    case pairWith = "PairWith"
    /// Answers a `pairing-request` event.
    case answerPairing = "AnswerPairing"
    /// `Cancel` with options: `remove_bond` removes the bond with the last use.
    case cancelWith = "CancelWith"
    /// The peripherals relinkd knows among those named (CoreBluetooth's `retrievePeripheralsWithIdentifiers:`).
    case retrievePeripherals = "RetrievePeripherals"
    /// The peripherals connected to the system that offer given services
    /// (CoreBluetooth's `retrieveConnectedPeripheralsWithServices:`).
    case retrieveConnectedPeripherals = "RetrieveConnectedPeripherals"
    /// Hear of links made and lost at the system level to peripherals that
    /// offer given services or are given peripherals (CoreBluetooth's
    /// `registerForConnectionEvents(options:)`); replaces the previous registration.
    case registerForConnectionEvents = "RegisterForConnectionEvents"
    /// Stop hearing of them.
    case unregisterForConnectionEvents = "UnregisterForConnectionEvents"
}

/// Properties of `org.relink.Central1`.
public enum Central1Property: String, Sendable, CaseIterable {
    /// The restore identifier.
    case identifier = "Identifier"
    /// The Unix user that owns it.
    case owner = "Owner"
    /// `gap` or `advertising`.
    case nameRule = "NameRule"
    /// Whether its scan is on.
    case scanning = "Scanning"
    /// The services its scan looks for.
    case scanServices = "ScanServices"
    /// Whether its scan reports duplicates.
    case allowDuplicates = "AllowDuplicates"
    /// Its scan's options as `Scan` took them (`allow_duplicates`,
    /// `manufacturer_data`, `service_data`).
    case scanOptions = "ScanOptions"
    /// The newest sequence number given out.
    case lastSequence = "LastSequence"
    /// Acknowledged through this sequence number.
    case acknowledged = "Acknowledged"
    /// Events dropped by the bound since the identifier was created.
    case droppedEvents = "DroppedEvents"
    /// The bound of unacknowledged events.
    case eventLimit = "EventLimit"
}

/// Properties of `org.relink.Peripheral1` (docs/api/Peripheral1.md).
public enum Peripheral1Property: String, Sendable, CaseIterable {
    /// relink's stable peripheral identifier (a UUID, uppercase).
    case id = "Id"
    /// Its Bluetooth address.
    case address = "Address"
    /// `public` or `random`.
    case addressType = "AddressType"
    /// The adapter it is reached by.
    case adapter = "Adapter"
    /// The advertised Local Name.
    case advertisingName = "AdvertisingName"
    /// When the advertised name was last seen (Unix ms).
    case advertisingNameSeen = "AdvertisingNameSeen"
    /// The GAP Device Name.
    case gapName = "GAPName"
    /// When the GAP name was last seen (Unix ms).
    case gapNameSeen = "GAPNameSeen"
    /// The resolved name.
    case name = "Name"
    /// `gap`, `advertising` or `none`.
    case nameSource = "NameSource"
    /// Whether it is connected.
    case connected = "Connected"
    /// Its last RSSI.
    case rssi = "RSSI"
    /// Its known services.
    case services = "Services"
    /// When it was last seen (Unix ms).
    case lastSeen = "LastSeen"
    /// The link's ATT MTU (0: no link with services resolved).
    case mtu = "MTU"
    /// The largest value of a write with response (512; 0 without a link).
    case maximumWriteWithResponse = "MaximumWriteWithResponse"
    /// The largest value of a write without response (MTU − 3, at most 512; 0 without a link).
    case maximumWriteWithoutResponse = "MaximumWriteWithoutResponse"
    /// BlueZ's `Device1.Paired`: the link is (or was) authenticated.
    case paired = "Paired"
    /// BlueZ's `Device1.Bonded`: the keys are stored, the bond outlives the link.
    case bonded = "Bonded"
    /// BlueZ's `Device1.Trusted`.
    case trusted = "Trusted"
}

/// Members of `org.relink.WriteStream1` (docs/api/WriteStream1.md).
public enum WriteStream1Member: String, Sendable, CaseIterable {
    /// Writes one value without response, or refuses it (`WriteQueueFull`).
    case write = "Write"
    /// Ends the stream.
    case close = "Close"
    /// The signal that a refused write would fit now.
    case readyToWrite = "ReadyToWrite"
}

/// Properties of `org.relink.WriteStream1`.
public enum WriteStream1Property: String, Sendable, CaseIterable {
    /// The peripheral's UUID (as `Peripheral1.Id`).
    case peripheral = "Peripheral"
    /// The service UUID.
    case service = "Service"
    /// The characteristic UUID.
    case characteristic = "Characteristic"
    /// The largest value a `Write` takes now (ATT MTU − 3, at most 512; 0 while the link is down).
    case maximumLength = "MaximumLength"
    /// `acquired` (BlueZ's AcquireWrite socket) or `write-command` (WriteValue, type command).
    case transport = "Transport"
}
