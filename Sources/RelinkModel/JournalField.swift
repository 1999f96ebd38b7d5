/// The name of every structured journal field relink writes: the one list.
///
/// Every layer passes these as swift-log metadata keys (the raw value is the
/// key), and relink's journald handler writes each key as a field of that name.
/// Query them with, for example,
/// `journalctl -u relinkd RELINK_RESTORE_ID=front-door RELINK_DECISION=connect-failed`.
/// `docs/journal.md` lists them for operators; a test keeps the two in step
/// and fails when a `RELINK_` name is spelled anywhere else in `Sources/`.
///
/// Fields journald itself defines (`MESSAGE_ID`, `PRIORITY`, `CODE_FILE`, …)
/// are written by the journald handler in the `Systemd` module and are not
/// listed here. Values are text; counts and numbers are in decimal.
///
/// ```swift
/// logger.error("cannot store a name", metadata: .journal([.peripheral: "\(peripheral)", .error: "\(error)"]))
/// ```
public enum JournalField: String, CaseIterable, Sendable {
    // Who and what a decision is about.

    /// The restore identifier: the application-chosen key of restorable state.
    case restoreID = "RELINK_RESTORE_ID"
    /// The peripheral relink keeps a link to: its ``PeripheralID`` (a UUID).
    case peripheral = "RELINK_PERIPHERAL"
    /// A second peripheral involved, such as the one already holding an
    /// address another peripheral claims (address take-over).
    case otherPeripheral = "RELINK_OTHER_PERIPHERAL"
    /// A Bluetooth device address, such as `AA:BB:CC:DD:EE:FF`.
    case address = "RELINK_ADDRESS"
    /// The adapter, such as `hci0`.
    case adapter = "RELINK_ADAPTER"
    /// The adapter's state as programs are told of it (``AdapterState``, such as `poweredOff`).
    case adapterState = "RELINK_ADAPTER_STATE"
    /// The roles the adapter supports (``AdapterRole`` names, comma-separated).
    case adapterRoles = "RELINK_ADAPTER_ROLES"
    /// A characteristic, by service and characteristic UUID (``CharacteristicKey``).
    case characteristic = "RELINK_CHARACTERISTIC"
    /// The service UUIDs of a peripheral's GATT database, comma-separated, in handle order.
    case gattServices = "RELINK_GATT_SERVICES"
    /// A peripheral's name as relink resolved it.
    case name = "RELINK_NAME"
    /// Where ``name`` came from: the advertisement or the GAP Device Name.
    case nameSource = "RELINK_NAME_SOURCE"

    // What happened.

    /// The event name: a catalogued event's name (such as `connect-failed`,
    /// the `Systemd` module's `RelinkMessageID.eventName`), a client API
    /// event kind, or a BlueZ-layer event such as `bluetoothd-lost`.
    case event = "RELINK_EVENT"
    /// The decision taken, such as `connect-failed` (the restoration core's
    /// decision names) or `half-open-link`.
    case decision = "RELINK_DECISION"
    /// The reconnect strategy in force (``Strategy``).
    case strategy = "RELINK_STRATEGY"
    /// The connection attempt number, from 1.
    case attempt = "RELINK_ATTEMPT"
    /// The error: its text, or a D-Bus error name.
    case error = "RELINK_ERROR"
    /// The class of a BlueZ failure (``FailureClass``).
    case errorClass = "RELINK_ERROR_CLASS"
    /// The human-readable message that came with ``error``'s D-Bus error name.
    case errorMessage = "RELINK_ERROR_MESSAGE"
    /// How long a step took (a Swift `Duration`).
    case duration = "RELINK_DURATION"

    // Clients of the D-Bus API.

    /// A client's unique bus name, such as `:1.42`.
    case client = "RELINK_CLIENT"
    /// The Unix user id of the D-Bus caller.
    case callerUID = "RELINK_CALLER_UID"
    /// The Unix user id that owns a restore identifier.
    case ownerUID = "RELINK_OWNER_UID"
    /// Whether a client's registration created the restore identifier (`true`/`false`).
    case new = "RELINK_NEW"
    /// An identifier's name rule: which name (advertising or GAP) it prefers.
    case nameRule = "RELINK_NAME_RULE"
    /// An identifier's bound on events kept for its clients until acknowledged.
    case eventLimit = "RELINK_EVENT_LIMIT"
    /// An event's sequence number, per restore identifier.
    case sequence = "RELINK_SEQUENCE"
    /// A number of events (such as those shown to clients but not stored).
    case count = "RELINK_COUNT"

    // Scanning and background auto-connect.

    /// The service UUIDs of the discovery filter in force.
    case scanUUIDs = "RELINK_SCAN_UUIDS"
    /// The service UUIDs bluetoothd's background auto-connect is armed for.
    case autoConnectUUIDs = "RELINK_AUTOCONNECT_UUIDS"

    // Start-up: what was restored.

    /// How many restore identifiers there are.
    case identifiers = "RELINK_IDENTIFIERS"
    /// How many connection intents were resumed.
    case intents = "RELINK_INTENTS"
    /// How many notification subscriptions were resumed.
    case subscriptions = "RELINK_SUBSCRIPTIONS"
    /// How many scans were resumed.
    case scans = "RELINK_SCANS"

    // The peripheral role.

    /// The remote central of a peripheral-role request (its address, or `unknown`).
    case central = "RELINK_CENTRAL"
    /// The number of a peripheral-role request handed to the program.
    case request = "RELINK_REQUEST"
    /// The ATT error relinkd answered a central with (``ATTError``'s name).
    case attError = "RELINK_ATT_ERROR"
    /// Relaunch: the D-Bus activatable name relinkd has the bus start for
    /// an identifier's program (docs/relaunch.md).
    case busName = "RELINK_BUS_NAME"

    // Transfers.

    /// A durable transfer's identifier (its UUID).
    case transfer = "RELINK_TRANSFER"
    /// The bytes of a transfer the peripheral confirmed.
    case offset = "RELINK_OFFSET"
    /// A transfer's length in bytes.
    case length = "RELINK_LENGTH"

    // The restore store.

    /// The path of the restore store's database.
    case storePath = "RELINK_STORE_PATH"
    /// The store's bad-state policy (`StoreOpenPolicy`).
    case storePolicy = "RELINK_STORE_POLICY"
    /// Where the store logged that it moved a damaged database aside.
    case storeQuarantine = "RELINK_STORE_QUARANTINE"
    /// Where relinkd reports a damaged database was moved aside (the
    /// catalogued `state-file-quarantined` entry).
    case file = "RELINK_FILE"
    /// The exit status relinkd ends with when the store cannot be opened.
    case exitStatus = "RELINK_EXIT_STATUS"

    // Tests.

    /// A test run's tag, written only by the `relink-systemd-probe` test
    /// helper so that a test finds its own entries.
    case testRun = "RELINK_TEST_RUN"
}

extension Dictionary where Key == String {
    /// Metadata (or any string-keyed dictionary) from journal fields, keyed
    /// by their names: `metadata: .journal([.restoreID: "\(id)", .error: "\(error)"])`.
    /// A field given twice keeps its last value.
    @inlinable  // specialised where it is called: generic, it was 7% of a 10,000-intent start-up
    public static func journal(_ fields: KeyValuePairs<JournalField, Value>) -> Self {
        var dictionary: Self = [:]
        for (field, value) in fields { dictionary[field.rawValue] = value }
        return dictionary
    }
}

extension JournalField {
    /// What an entry is about, for its text, so that `journalctl` without
    /// `-o verbose` still names the identifier, the device and the
    /// characteristic: `identifier front-door, device 00:00:00:00:00:02`.
    /// The peripheral's UUID is named only when its address is not. A value
    /// the message already contains is not repeated. Nil when the entry has
    /// none of these fields.
    /// - Parameters:
    ///   - message: the entry's text.
    ///   - value: a field's value in the entry, nil when absent.
    public static func subject(of message: String, _ value: (JournalField) -> String?) -> String? {
        var parts: [String] = []
        func add(_ label: String, _ field: JournalField) {
            guard let text = value(field), !text.isEmpty, !Self.contains(message, text) else { return }
            parts.append(label + " " + text)
        }
        add("identifier", .restoreID)
        if value(.address) != nil { add("device", .address) } else { add("peripheral", .peripheral) }
        add("characteristic", .characteristic)
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// `message.contains(text)`; on ASCII text (every journal line of a
    /// machine's decisions) a search of the bytes, which gives the same
    /// answer there without Foundation's locale-aware search (each line
    /// asks it up to three times).
    static func contains(_ message: String, _ text: String) -> Bool {
        let m = message.utf8, t = text.utf8
        guard m.allSatisfy({ $0 < 0x80 }), t.allSatisfy({ $0 < 0x80 }) else { return message.contains(text) }
        guard let first = t.first else { return true }
        guard t.count <= m.count else { return false }
        var start = m.startIndex
        while let found = m[start...].firstIndex(of: first) {
            if m[found...].starts(with: t) { return true }
            start = m.index(after: found)
        }
        return false
    }
}
