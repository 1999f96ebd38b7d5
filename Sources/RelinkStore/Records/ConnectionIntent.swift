public import Foundation
public import RelinkModel

/// A connection a restore identifier asked for, with what relinkd last knew of it.
public struct ConnectionIntent: Hashable, Sendable, Codable {
    /// The last known state of the link, as stored.
    public enum State: String, Hashable, Sendable, Codable, CaseIterable {
        case pending
        case connecting
        case connected
    }

    /// Longest stored error class, in characters.
    public static let maximumErrorClassLength = 64
    /// Longest stored error message, in characters (longer messages are truncated).
    public static let maximumErrorMessageLength = 1024

    public var identifier: RestoreIdentifier
    public var peripheral: PeripheralID
    public var state: State
    /// Timeout of each strategy step; nil = the daemon's default.
    public var stepTimeout: Duration?
    /// Overall timeout counted from `requestedAt`; nil = pending until cancelled.
    public var overallTimeout: Duration?
    public var strategies: [Strategy]
    public var requestedAt: Date
    public var attempts: Int
    /// Class of the last error (as classified by the BlueZ layer), or nil.
    public var lastErrorClass: String?
    public var lastErrorMessage: String?
    /// How a scan recognises the peripheral when its stored address no
    /// longer does (an address that changed): its exact Local Name, a
    /// manufacturer's company ID in its data, services it advertises. Each
    /// optional; none set = by address only.
    public var matchName: String?
    public var matchManufacturerID: UInt16?
    public var matchServices: [BluetoothUUID]
    /// Manufacturer- and service-data prefixes the advertisement must all match.
    public var matchDataPrefixes: [AdvertisingDataPrefix]
    /// Pair on demand when an operation needs encryption (v10; default true).
    public var pairOnDemand: Bool
    /// Whether the peripheral is bonded, and whether the stored address is
    /// the identity bluetoothd resolved its private address to (v11).
    public var bond: IntentBond
    /// The agent's I/O capability for this intent's pairings (v12;
    /// default `NoInputNoOutput`).
    public var pairingCapability: AgentCapability
    /// Longest match name, in UTF-8 bytes (an advertisement holds less).
    public static let maximumMatchNameLength = MatchRule.maximumLocalNameLength

    /// - Throws: `StoreError.invalidArgument` for an empty or repeated strategy
    ///   list, negative attempts, non-positive timeouts, or an error class
    ///   longer than `maximumErrorClassLength`.
    public init(identifier: RestoreIdentifier, peripheral: PeripheralID, state: State = .pending,
                stepTimeout: Duration? = nil, overallTimeout: Duration? = nil,
                strategies: [Strategy] = Strategy.defaultOrder, requestedAt: Date,
                attempts: Int = 0, lastErrorClass: String? = nil, lastErrorMessage: String? = nil,
                matchName: String? = nil, matchManufacturerID: UInt16? = nil, matchServices: [BluetoothUUID] = [],
                matchDataPrefixes: [AdvertisingDataPrefix] = [], pairOnDemand: Bool = true,
                bond: IntentBond = IntentBond(), pairingCapability: AgentCapability = .noInputNoOutput) throws(StoreError) {
        // No Set or array allocations here: this runs for every row on load.
        guard !strategies.isEmpty, strategies.indices.allSatisfy({ i in !strategies[..<i].contains(strategies[i]) }) else {
            throw .invalidArgument("strategy list must be non-empty without repeats")
        }
        guard attempts >= 0 else { throw .invalidArgument("attempts must be >= 0") }
        if let stepTimeout, stepTimeout <= .zero { throw .invalidArgument("timeouts must be positive") }
        if let overallTimeout, overallTimeout <= .zero { throw .invalidArgument("timeouts must be positive") }
        if let lastErrorClass, lastErrorClass.isEmpty || lastErrorClass.count > Self.maximumErrorClassLength {
            throw .invalidArgument("error class must be 1...\(Self.maximumErrorClassLength) characters")
        }
        if let matchName, matchName.isEmpty || matchName.utf8.count > Self.maximumMatchNameLength {
            throw .invalidArgument("match name must be 1...\(Self.maximumMatchNameLength) UTF-8 bytes")
        }
        self.identifier = identifier
        self.peripheral = peripheral
        self.state = state
        self.stepTimeout = stepTimeout.map { .milliseconds($0.storedMilliseconds) }
        self.overallTimeout = overallTimeout.map { .milliseconds($0.storedMilliseconds) }
        self.strategies = strategies
        self.requestedAt = requestedAt.roundedToStoredPrecision
        self.attempts = attempts
        self.lastErrorClass = lastErrorClass
        self.lastErrorMessage = lastErrorMessage.map { String($0.prefix(Self.maximumErrorMessageLength)) }
        self.matchName = matchName
        self.matchManufacturerID = matchManufacturerID
        self.matchServices = matchServices
        self.matchDataPrefixes = matchDataPrefixes
        self.pairOnDemand = pairOnDemand
        self.bond = bond
        self.pairingCapability = pairingCapability
    }

    /// When the overall timeout runs out, or nil when pending until cancelled.
    public var deadline: Date? { overallTimeout.map { requestedAt.addingTimeInterval(Double($0.storedMilliseconds) / 1000) } }
}
