public import DBus
import RelinkAPI
public import RelinkModel

/// Options of ``RelinkCentral/connect(peripheral:options:)`` (`Central1.Connect`).
public struct RelinkConnectOptions: Sendable, Hashable {
    /// How relinkd may find the peripheral again, tried in this order.
    public enum Strategy: String, Sendable, Hashable, CaseIterable {
        case knownIdentifier = "known-identifier"
        case alreadyConnected = "already-connected"
        case scan
    }

    /// Overall time in seconds before relinkd gives up (0 < t ≤ 86,400); nil: none.
    public var timeout: Double?
    /// Keep trying until cancelled; nil leaves relinkd's default (true
    /// when there is no timeout). True together with a timeout is refused.
    public var pendingUntilCancelled: Bool?
    /// Service UUIDs the peripheral exposes (for the scan and
    /// already-connected strategies), at most 64.
    public var services: [String]
    /// Strategies to use; empty: relinkd's default (all three).
    public var strategies: [Strategy]
    /// The address type of an address argument ("public" when nil).
    public var addressType: AddressType?
    /// For a peripheral whose address changes: its exact advertised Local
    /// Name (1 to 248 UTF-8 bytes). With any `match…` option, relinkd's scan
    /// also takes a device at another address that meets every one given,
    /// and keeps its address from then on.
    public var matchName: String?
    /// A company ID its manufacturer data carries.
    public var matchManufacturerID: UInt16?
    /// Services it advertises, every one of them; at most 64.
    public var matchServices: [String]
    /// Manufacturer- and service-data prefixes its advertisement must all match.
    public var matchDataPrefixes: Set<AdvertisingDataPrefix>
    /// Whether relinkd pairs when a read, write or subscription is refused
    /// for want of encryption, then tries once more (`pair_on_demand`;
    /// nil: relinkd's default, true, as CoreBluetooth).
    public var pairOnDemand: Bool?
    /// The I/O capability relinkd's agent pairs with for this intent
    /// (`Pair` and pairing on demand; `pairing_capability`; nil: relinkd's
    /// default, `NoInputNoOutput`, Just Works). Any other forwards the
    /// peripheral's passkey or confirmation request to the attached client
    /// as a `pairing-request` event (``RelinkPairingRequest``), answered with
    /// ``RelinkManager/answerPairing(_:request:_:)``; with no client
    /// attached the pairing fails (`AuthenticationFailed`).
    public var pairingCapability: AgentCapability?

    /// The longest timeout relinkd takes, in seconds (the contract's limit).
    public static let maximumTimeout: Double = APILimits.maximumConnectTimeout

    /// The Bluetooth address type of an address relinkd does not know yet.
    public enum AddressType: String, Sendable, Hashable { case `public`, random }

    /// Options; every default leaves relinkd's own default. Nothing is
    /// checked until ``dictionary()``.
    public init(timeout: Double? = nil, pendingUntilCancelled: Bool? = nil, services: [String] = [],
                strategies: [Strategy] = [], addressType: AddressType? = nil,
                matchName: String? = nil, matchManufacturerID: UInt16? = nil, matchServices: [String] = [],
                matchDataPrefixes: Set<AdvertisingDataPrefix> = []) {
        self.matchDataPrefixes = matchDataPrefixes
        self.timeout = timeout
        self.pendingUntilCancelled = pendingUntilCancelled
        self.services = services
        self.strategies = strategies
        self.addressType = addressType
        self.matchName = matchName
        self.matchManufacturerID = matchManufacturerID
        self.matchServices = matchServices
    }

    /// The longest match name relinkd takes, in UTF-8 bytes (the model's limit).
    public static let maximumMatchNameLength = MatchRule.maximumLocalNameLength

    /// The `a{sv}` relinkd takes, after checking every option.
    /// - Throws: ``RelinkClientError`` (`InvalidArguments`): a timeout that
    ///   is not in 0 < t ≤ 86,400 s, `pendingUntilCancelled` true with a
    ///   timeout, a bad or too long service list, a strategy given twice,
    ///   an empty or too long match name.
    public func dictionary() throws(RelinkClientError) -> [String: DBusValue] {
        var out: [String: DBusValue] = [:]
        if let timeout {
            guard timeout.isFinite, timeout > 0, timeout <= Self.maximumTimeout else {
                let shown = timeout.isFinite && timeout == timeout.rounded(.towardZero) && timeout.magnitude < 1e15 ? "\(Int(timeout))" : "\(timeout)"
                throw .invalid("timeout must be > 0 and at most \(Int(Self.maximumTimeout)) seconds, not \(shown)")
            }
            if pendingUntilCancelled == true { throw .invalid("A connection cannot both have a timeout and be pending until cancelled.") }
            out["timeout"] = .double(timeout)
        }
        if let pendingUntilCancelled { out["pending_until_cancelled"] = .boolean(pendingUntilCancelled) }
        if !services.isEmpty {
            out["services"] = .array(.string, try RelinkArguments.bluetoothUUIDs(services).map(DBusValue.string))
        }
        if !strategies.isEmpty {
            guard Set(strategies).count == strategies.count else { throw .invalid("A strategy is given more than once.") }
            out["strategies"] = .array(.string, strategies.map { .string($0.rawValue) })
        }
        if let addressType { out["address_type"] = .string(addressType.rawValue) }
        if let matchName {
            guard !matchName.isEmpty, matchName.utf8.count <= Self.maximumMatchNameLength else {
                throw .invalid("The match name must be 1 to \(Self.maximumMatchNameLength) UTF-8 bytes long.")
            }
            out["match_name"] = .string(matchName)
        }
        if let matchManufacturerID { out["match_manufacturer_id"] = .uint16(matchManufacturerID) }
        if !matchServices.isEmpty {
            out["match_services"] = .array(.string, try RelinkArguments.bluetoothUUIDs(matchServices).map(DBusValue.string))
        }
        out.merge(DataPrefixOptions.options(matchDataPrefixes, keys: DataPrefixOptions.matchKeys)) { $1 }
        if let pairOnDemand { out["pair_on_demand"] = .boolean(pairOnDemand) }
        if let pairingCapability { out["pairing_capability"] = .string(pairingCapability.rawValue) }
        return out
    }
}

/// Options of ``RelinkCentral/scan(services:options:)`` (`Central1.Scan`).
public struct RelinkScanOptions: Sendable, Hashable {
    /// Report every advertisement report, not one discovery per peripheral
    /// and payload.
    public var allowDuplicates: Bool
    /// Manufacturer- and service-data prefixes: when any is given, only
    /// peripherals whose advertising data matches one of them (for example
    /// `[IBeacon.scanPrefix]`). At most `DataPrefixOptions.maximumCount`.
    public var dataPrefixes: Set<AdvertisingDataPrefix>

    /// Options; by default one discovery per peripheral and payload, every peripheral.
    public init(allowDuplicates: Bool = false, dataPrefixes: Set<AdvertisingDataPrefix> = []) {
        self.allowDuplicates = allowDuplicates
        self.dataPrefixes = dataPrefixes
    }

    var dictionary: [String: DBusValue] {
        ["allow_duplicates": .boolean(allowDuplicates)]
            .merging(DataPrefixOptions.options(dataPrefixes, keys: DataPrefixOptions.scanKeys)) { $1 }
    }
}

/// Options of `Manager1.Register`.
public struct RelinkRegisterOptions: Sendable, Hashable {
    /// Which name relinkd resolves as "the" name of a peripheral.
    public enum NameRule: String, Sendable, Hashable { case gap, advertising }

    /// nil leaves the identifier's rule as it is ("gap" for a new one).
    public var nameRule: NameRule?
    /// Replay stored, unacknowledged events after the reply (default true).
    public var replay: Bool
    /// How many unacknowledged events relinkd keeps for the identifier
    /// (1 to 100,000); nil leaves the bound as it is (1,000 for a new
    /// identifier). A lower bound drops the oldest at once.
    public var eventLimit: UInt32?
    /// How relinkd starts this program when an event comes while it is not
    /// running (`launch`, docs/relaunch.md); nil leaves the identifier's
    /// spec as it is.
    public var launch: LaunchSpec?

    /// Options; the defaults keep the identifier's settings and replay.
    public init(nameRule: NameRule? = nil, replay: Bool = true, eventLimit: UInt32? = nil, launch: LaunchSpec? = nil) {
        self.nameRule = nameRule
        self.replay = replay
        self.eventLimit = eventLimit
        self.launch = launch
    }

    var dictionary: [String: DBusValue] {
        var out: [String: DBusValue] = ["replay": .boolean(replay)]
        if let nameRule { out["name_rule"] = .string(nameRule.rawValue) }
        if let eventLimit { out["event_limit"] = .uint32(eventLimit) }
        if let launch { out["launch"] = LaunchOptions.value(launch) }
        return out
    }
}

extension [String: DBusValue] {
    /// As an `a{sv}` value.
    var variantDictionary: DBusValue {
        .dictionary(key: .string, value: .variant, sorted { $0.key < $1.key }.map { .init(.string($0.key), .variant($0.value)) })
    }
}
