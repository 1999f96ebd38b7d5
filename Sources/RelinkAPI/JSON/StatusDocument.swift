import Foundation
public import RelinkModel

/// The `Status` document (Manager1.Status, Control1.Status): relinkd's
/// state as one JSON object (docs/api/Manager1.md#status).
///
/// The one type of the document: relinkd encodes it, relinkctl and test
/// programs decode it. Its keys are the Swift names of its fields, so they
/// are camelCase like every JSON key relink writes (docs/api/README.md#json);
/// a time is a Unix time in milliseconds under a key ending in `Ms`.
public struct StatusDocument: Codable, Sendable, Hashable {
    /// Whether relinkd finished start-up (`READY=1`).
    public var ready: Bool
    /// The adapter relinkd uses (`hci0`).
    public var adapter: String
    /// Whether relinkd's discovery is on (for a scan, or a connection looking for its device).
    public var discovering: Bool
    /// The adapter's state as programs are told of it (``AdapterState``'s raw value).
    public var adapterState: String
    /// The roles the adapter can take now (``AdapterRole``'s raw values).
    public var adapterRoles: [String]
    /// The identifiers the caller may see, sorted.
    public var identifiers: [Identifier]
    /// Databases moved aside when relinkd started (it then started EMPTY); usually empty.
    public var quarantined: [QuarantinedStore]
    /// Whether the store takes writes.
    public var store: StoreHealth
    /// Stored rows that no longer decode, kept aside in the file.
    public var unreadableRows: [UnreadableRow]
    /// Each user's use against their bounds: root's view only.
    public var quotas: Quotas?
    /// relinkd's queue of inputs when the document was made.
    public var inbox: Inbox?

    /// A document with no identifier, for relinkd to fill.
    public init(ready: Bool, adapter: String, discovering: Bool, adapterState: String, adapterRoles: [String],
                identifiers: [Identifier] = [], quarantined: [QuarantinedStore] = [], store: StoreHealth,
                unreadableRows: [UnreadableRow] = [], quotas: Quotas? = nil, inbox: Inbox? = nil) {
        self.ready = ready
        self.adapter = adapter
        self.discovering = discovering
        self.adapterState = adapterState
        self.adapterRoles = adapterRoles
        self.identifiers = identifiers
        self.quarantined = quarantined
        self.store = store
        self.unreadableRows = unreadableRows
        self.quotas = quotas
        self.inbox = inbox
    }

    /// One restore identifier.
    public struct Identifier: Codable, Sendable, Hashable {
        /// The identifier.
        public var id: String
        /// Its connection intents, sorted.
        public var connections: [Connection]
        /// How many subscriptions it keeps.
        public var subscriptions: Int
        /// Whether it keeps a scan.
        public var scanning: Bool
        /// Its launch spec and where its program's starts are; nil without one.
        public var launch: Launch?

        /// An identifier's entry.
        public init(id: String, connections: [Connection], subscriptions: Int, scanning: Bool, launch: Launch? = nil) {
            self.id = id
            self.connections = connections
            self.subscriptions = subscriptions
            self.scanning = scanning
            self.launch = launch
        }
    }

    /// One connection intent of an identifier.
    public struct Connection: Codable, Sendable, Hashable {
        /// The peripheral's identifier.
        public var peripheral: String
        /// The intent's state (`idle`, `trying-…`, `linked`, …).
        public var state: String
        /// The peripheral's last known address.
        public var address: String?
        /// The attempt under way (0 when none failed).
        public var attempt: Int
        /// Whether the peripheral is bonded, as stored.
        public var bonded: Bool
        /// Whether the bond gave an identity address.
        public var identityAddress: Bool
        /// Subscribed characteristics the link does not carry yet; nil when none or when down.
        public var unarmed: [String]?
        /// The intent's last failure, until its link comes back.
        public var lastError: String?
        /// When `lastError` happened.
        public var lastErrorAtMs: Int64?

        /// An intent's entry.
        public init(peripheral: String, state: String, address: String? = nil, attempt: Int, bonded: Bool, identityAddress: Bool,
                    unarmed: [String]? = nil, lastError: String? = nil, lastErrorAtMs: Int64? = nil) {
            self.peripheral = peripheral
            self.state = state
            self.address = address
            self.attempt = attempt
            self.bonded = bonded
            self.identityAddress = identityAddress
            self.unarmed = unarmed
            self.lastError = lastError
            self.lastErrorAtMs = lastErrorAtMs
        }
    }

    /// An identifier's launch spec (docs/relaunch.md#status).
    public struct Launch: Codable, Sendable, Hashable {
        /// The well-known bus name relinkd starts.
        public var busName: String
        /// The event kinds that start it.
        public var wakeOn: [String]
        /// The systemd unit relinkd starts instead, when the spec names one.
        public var systemdUnit: String?
        /// `idle`, `starting`, `limited`, … (``RelaunchPolicy``'s phases).
        public var state: String
        /// Starts within the limit's window.
        public var startsInWindow: Int
        /// Why the last start failed.
        public var lastError: String?
        /// Until when a limited, backing-off or waiting launch waits.
        public var untilMs: Int64?

        /// A launch entry.
        public init(busName: String, wakeOn: [String], systemdUnit: String? = nil, state: String, startsInWindow: Int,
                    lastError: String? = nil, untilMs: Int64? = nil) {
            self.busName = busName
            self.wakeOn = wakeOn
            self.systemdUnit = systemdUnit
            self.state = state
            self.startsInWindow = startsInWindow
            self.lastError = lastError
            self.untilMs = untilMs
        }
    }

    /// A database relinkd moved aside at start-up.
    public struct QuarantinedStore: Codable, Sendable, Hashable {
        /// Where it was.
        public var path: String
        /// Where it is now.
        public var movedTo: String
        /// Why, as a tag (`corrupt`, `empty`, …).
        public var reason: String
        /// Why, in words.
        public var message: String
        /// When it was moved.
        public var atMs: Int64

        /// A moved database.
        public init(path: String, movedTo: String, reason: String, message: String, atMs: Int64) {
            self.path = path
            self.movedTo = movedTo
            self.reason = reason
            self.message = message
            self.atMs = atMs
        }
    }

    /// Whether the store takes writes.
    public struct StoreHealth: Codable, Sendable, Hashable {
        /// True while the store refuses writes (a full disk, an I/O error).
        public var refusingWrites: Bool
        /// Events relinkd could not store since it started, each counted as dropped.
        public var unstoredEvents: Int64
        /// The store's last failure.
        public var lastError: String?

        /// The store's health.
        public init(refusingWrites: Bool, unstoredEvents: Int64, lastError: String? = nil) {
            self.refusingWrites = refusingWrites
            self.unstoredEvents = unstoredEvents
            self.lastError = lastError
        }
    }

    /// A stored row that no longer decodes.
    public struct UnreadableRow: Codable, Sendable, Hashable {
        /// Its table.
        public var table: String
        /// Its identifier column's text ("" when it has none).
        public var identifier: String
        /// What could not be decoded.
        public var reason: String

        /// A row kept aside.
        public init(table: String, identifier: String, reason: String) {
            self.table = table
            self.identifier = identifier
            self.reason = reason
        }
    }

    /// Each user's use against their bounds (docs/api/errors.md#per-user-bounds).
    public struct Quotas: Codable, Sendable, Hashable {
        /// Every user's bounds but root's, by ``QuotaBound/jsonKey``.
        public var bounds: [String: Int64]
        /// Each user's use, by UID.
        public var users: [User]

        /// The quotas entry.
        public init(bounds: [String: Int64], users: [User]) {
            self.bounds = bounds
            self.users = users
        }

        /// One user's use.
        public struct User: Codable, Sendable, Hashable {
            /// The user's UID.
            public var uid: UInt32
            /// False for root (unbounded).
            public var bounded: Bool
            /// What the user keeps, by ``QuotaBound/jsonKey``.
            public var use: [String: Int64]

            /// A user's entry.
            public init(uid: UInt32, bounded: Bool, use: [String: Int64]) {
                self.uid = uid
                self.bounded = bounded
                self.use = use
            }
        }
    }

    /// relinkd's queue of inputs (unbounded by count: docs/architecture.md).
    public struct Inbox: Codable, Sendable, Hashable {
        /// Inputs waiting or being handled.
        public var queued: Int
        /// The most ever waiting since relinkd started.
        public var highWater: Int

        /// The inbox's depth.
        public init(queued: Int, highWater: Int) {
            self.queued = queued
            self.highWater = highWater
        }
    }

    /// The document as relinkd sends it: one line of JSON, keys sorted.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads a document relinkd sent.
    /// - Throws: `DecodingError` when `json` is not a `Status` document of this version.
    public init(json: String) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(json.utf8))
    }
}

extension QuotaBound {
    /// The bound's key in JSON documents (`Status`'s quotas): its name in
    /// camelCase (`publishedServices`), where the configuration file spells
    /// it `published-services`.
    public var jsonKey: String { JSONKey.fromWords(rawValue) }
}
