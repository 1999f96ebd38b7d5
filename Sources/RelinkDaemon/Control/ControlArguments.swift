import DBus
import Restoration
import RelinkModel
import RelinkAPI

/// Validates a control call's arguments into core values; every failure is
/// an `InvalidArguments` naming the argument.
struct ControlArguments {
    let values: [DBusValue]

    /// - Throws: `InvalidArguments` when the count differs.
    init(_ call: MethodCall, count: Int) throws(RelinkError) {
        guard call.arguments.count == count else {
            throw RelinkError(.invalidArguments, "expected \(count) arguments, got \(call.arguments.count)")
        }
        values = call.arguments
    }

    func string(_ index: Int, _ name: String) throws(RelinkError) -> String {
        guard case .string(let s) = values[index] else { throw RelinkError(.invalidArguments, "\(name) must be a string (s)") }
        guard s.utf8.count <= APILimits.maximumStringBytes else { throw RelinkError(.invalidArguments, "\(name) is too long") }
        return s
    }

    func identifier(_ index: Int) throws(RelinkError) -> RestoreIdentifier {
        let text = try string(index, "id")
        do { return try RestoreIdentifier(text) } catch { throw RelinkError(.invalidArguments, "\(error)") }
    }

    func address(_ index: Int) throws(RelinkError) -> BluetoothAddress {
        let text = try string(index, "address")
        do { return try BluetoothAddress(parsing: text.uppercased()) } catch { throw RelinkError(.invalidArguments, "\(error)") }
    }

    func uuid(_ value: DBusValue, _ name: String) throws(RelinkError) -> BluetoothUUID {
        guard case .string(let text) = value else { throw RelinkError(.invalidArguments, "\(name) must be a string (s)") }
        do { return try BluetoothUUID(parsing: text) } catch { throw RelinkError(.invalidArguments, "\(name): \(error)") }
    }

    func uuid(_ index: Int, _ name: String) throws(RelinkError) -> BluetoothUUID { try uuid(values[index], name) }

    func uuids(_ index: Int, _ name: String) throws(RelinkError) -> Set<BluetoothUUID> {
        var result: Set<BluetoothUUID> = []
        for text in try strings(index, name, atMost: APILimits.maximumUUIDs, " UUIDs") { result.insert(try uuid(.string(text), name)) }
        return result
    }

    /// An `as` of at most `limit` strings; `unit` ends the refusal's message.
    func strings(_ index: Int, _ name: String, atMost limit: Int, _ unit: String = "") throws(RelinkError) -> [String] {
        guard case .array(.string, let items) = values[index] else { throw RelinkError(.invalidArguments, "\(name) must be an array of strings (as)") }
        guard items.count <= limit else { throw RelinkError(.invalidArguments, "\(name): at most \(limit)\(unit)") }
        return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }

    func bool(_ index: Int, _ name: String) throws(RelinkError) -> Bool {
        guard case .boolean(let b) = values[index] else { throw RelinkError(.invalidArguments, "\(name) must be a boolean (b)") }
        return b
    }

    func uint64(_ index: Int, _ name: String) throws(RelinkError) -> Int64 {
        guard case .uint64(let v) = values[index] else { throw RelinkError(.invalidArguments, "\(name) must be a uint64 (t)") }
        guard let value = Int64(exactly: v) else { throw RelinkError(.invalidArguments, "\(name) is out of range") }
        return value
    }

    /// `Connect`'s options: `pending_until_cancelled` (b, default true),
    /// `timeout_s` (d, 0 < t ≤ 86400; required when not pending until
    /// cancelled), `services` (as), `strategies` (as, in order, each once, of
    /// `known-identifier`, `already-connected`, `scan`; default all three in
    /// that order), the match rule for an address that changed
    /// (`match_name` s, `match_manufacturer_id` q, `match_services` as,
    /// `match_manufacturer_data` a(qayay), `match_service_data` a(sayay);
    /// ``MatchRule``); with `allowAddressType`, `address_type` (s, `public` or
    /// `random`). Unknown keys are refused. `timeoutKey` names the timeout
    /// (`timeout_s` on Control1, `timeout` on Central1).
    func connectOptions(_ index: Int, timeoutKey: String = "timeout_s", allowAddressType: Bool = false) throws(RelinkError) -> ConnectionOptions {
        try connectRequest(index, timeoutKey: timeoutKey, allowAddressType: allowAddressType).options
    }

    /// `Connect`'s options with the address type asked for (public when not given).
    func connectRequest(_ index: Int, timeoutKey: String, allowAddressType: Bool) throws(RelinkError) -> (options: ConnectionOptions, addressKind: BluetoothAddress.Kind) {
        var allowed: [String: DBusType] = [
            "pending_until_cancelled": .boolean, timeoutKey: .double, "services": .array(.string), "strategies": .array(.string),
            "match_name": .string, "match_manufacturer_id": .uint16, "match_services": .array(.string),
            "pair_on_demand": .boolean, "pairing_capability": .string,
        ]
        for (kind, key) in DataPrefixOptions.matchKeys { allowed[key] = DataPrefixOptions.type(of: kind) }
        if allowAddressType { allowed["address_type"] = .string }
        let o = try options(index, allowed: allowed)
        var pending = true
        if case .boolean(let b)? = o["pending_until_cancelled"] { pending = b }
        var timeout: Double?
        if case .double(let d)? = o[timeoutKey] { timeout = d }
        let services = try uuidSet(o["services"], "services")
        var strategies = Strategy.defaultOrder
        if case .array(_, let items)? = o["strategies"] {
            strategies = []
            for item in items {
                switch item {
                case .string("known-identifier"): strategies.append(.knownIdentifier)
                case .string("already-connected"): strategies.append(.alreadyConnected)
                case .string("scan"): strategies.append(.scan)
                default: throw RelinkError(.invalidArguments, "strategies: each is known-identifier, already-connected or scan")
                }
            }
        }
        var match = MatchRule(services: try uuidSet(o["match_services"], "match_services"))
        if case .string(let name)? = o["match_name"] {
            guard !name.isEmpty, name.utf8.count <= MatchRule.maximumLocalNameLength else {
                throw RelinkError(.invalidArguments, "match_name must be 1 to \(MatchRule.maximumLocalNameLength) UTF-8 bytes")
            }
            match.localName = name
        }
        if case .uint16(let company)? = o["match_manufacturer_id"] { match.manufacturerID = company }
        match.dataPrefixes = try DataPrefixOptions.prefixes(in: o, keys: DataPrefixOptions.matchKeys)
        var kind = BluetoothAddress.Kind.public
        if case .string(let text)? = o["address_type"] {
            switch text {
            case "public": kind = .public
            case "random": kind = .random
            default: throw RelinkError(.invalidArguments, "address_type must be public or random")
            }
        }
        var deadline = ConnectionDeadline.pendingUntilCancelled
        if let timeout {
            guard timeout.isFinite, timeout > 0, timeout <= APILimits.maximumConnectTimeout else {
                throw RelinkError(.invalidArguments, "\(timeoutKey) must be in (0, \(Int(APILimits.maximumConnectTimeout))]")
            }
            guard o["pending_until_cancelled"] == nil || !pending else {
                throw RelinkError(.invalidArguments, "\(timeoutKey) conflicts with pending_until_cancelled=true")
            }
            deadline = .after(.milliseconds(Int64((timeout * 1000).rounded(.up))))
        } else if !pending {
            throw RelinkError(.invalidArguments, "\(timeoutKey) is required when pending_until_cancelled is false")
        }
        var pairOnDemand = true
        if case .boolean(let b)? = o["pair_on_demand"] { pairOnDemand = b }
        var capability = AgentCapability.noInputNoOutput
        if case .string(let text)? = o["pairing_capability"] {
            guard let named = AgentCapability(rawValue: text) else {
                throw RelinkError(.invalidArguments, "pairing_capability must be one of \(AgentCapability.names)")
            }
            capability = named
        }
        do {
            return (try ConnectionOptions(strategies: strategies, deadline: deadline, services: services, match: match,
                                          pairOnDemand: pairOnDemand, pairingCapability: capability), kind)
        } catch { throw RelinkError(.invalidArguments, "\(error)") }
    }

    /// An `as` option of service UUIDs (absent: none), at most 64.
    /// - Throws: `InvalidArguments` naming the option.
    private func uuidSet(_ value: DBusValue?, _ name: String) throws(RelinkError) -> Set<BluetoothUUID> {
        guard case .array(_, let items)? = value else { return [] }
        guard items.count <= APILimits.maximumUUIDs else { throw RelinkError(.invalidArguments, "\(name): at most \(APILimits.maximumUUIDs) UUIDs") }
        var set: Set<BluetoothUUID> = []
        for item in items { set.insert(try uuid(item, name)) }
        return set
    }

    /// An `a{sv}` of options: at most 16 keys, each once, each one of
    /// `allowed` with the type given there.
    /// - Throws: `InvalidArguments` naming the key.
    func options(_ index: Int, allowed: [String: DBusType]) throws(RelinkError) -> [String: DBusValue] {
        guard case .dictionary(.string, .variant, let entries) = values[index] else { throw RelinkError(.invalidArguments, "options must be a{sv}") }
        guard entries.count <= APILimits.maximumOptionKeys else { throw RelinkError(.invalidArguments, "options: at most \(APILimits.maximumOptionKeys) keys") }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key, case .variant(let value) = entry.value else { throw RelinkError(.invalidArguments, "options must be a{sv}") }
            guard let type = allowed[key] else {
                let known = allowed.keys.sorted().joined(separator: ", ")
                throw RelinkError(.invalidArguments, "unknown option \(String(key.prefix(64)).debugDescription) (known: \(known))")
            }
            guard value.type == type else {
                throw RelinkError(.invalidArguments, "option \(key) has the wrong type: expected \(type.signature), got \(value.type.signature)")
            }
            guard result.updateValue(value, forKey: key) == nil else { throw RelinkError(.invalidArguments, "option \(key) given twice") }
        }
        return result
    }
}
