import DBus
import Restoration

/// Validates a control call's arguments into core values; every failure is
/// a ``ControlError/invalidArguments(_:)`` naming the argument.
struct ControlArguments {
    let values: [DBusValue]

    /// - Throws: ``ControlError/invalidArguments(_:)`` when the count differs.
    init(_ call: MethodCall, count: Int) throws(ControlError) {
        guard call.arguments.count == count else {
            throw .invalidArguments("expected \(count) arguments, got \(call.arguments.count)")
        }
        values = call.arguments
    }

    func string(_ index: Int, _ name: String) throws(ControlError) -> String {
        guard case .string(let s) = values[index] else { throw .invalidArguments("\(name) must be a string (s)") }
        guard s.utf8.count <= 1024 else { throw .invalidArguments("\(name) is too long") }
        return s
    }

    func identifier(_ index: Int) throws(ControlError) -> RestoreIdentifier {
        let text = try string(index, "id")
        do {
            let id = try RestoreIdentifier(text)
            _ = try StoreMapping.storeIdentifier(id)  // the store's rules too
            return id
        } catch let e as ControlError {
            throw e
        } catch {
            throw .invalidArguments("\(error)")
        }
    }

    func address(_ index: Int) throws(ControlError) -> BluetoothAddress {
        let text = try string(index, "address")
        do { return try BluetoothAddress(parsing: text.uppercased()) } catch { throw .invalidArguments("\(error)") }
    }

    func uuid(_ value: DBusValue, _ name: String) throws(ControlError) -> BluetoothUUID {
        guard case .string(let text) = value else { throw .invalidArguments("\(name) must be a string (s)") }
        do { return try BluetoothUUID(parsing: text) } catch { throw .invalidArguments("\(name): \(error)") }
    }

    func uuid(_ index: Int, _ name: String) throws(ControlError) -> BluetoothUUID { try uuid(values[index], name) }

    func uuids(_ index: Int, _ name: String) throws(ControlError) -> Set<BluetoothUUID> {
        guard case .array(.string, let items) = values[index] else { throw .invalidArguments("\(name) must be an array of strings (as)") }
        guard items.count <= 64 else { throw .invalidArguments("\(name): at most 64 UUIDs") }
        var result: Set<BluetoothUUID> = []
        for item in items { result.insert(try uuid(item, name)) }
        return result
    }

    func bool(_ index: Int, _ name: String) throws(ControlError) -> Bool {
        guard case .boolean(let b) = values[index] else { throw .invalidArguments("\(name) must be a boolean (b)") }
        return b
    }

    func uint64(_ index: Int, _ name: String) throws(ControlError) -> Int64 {
        guard case .uint64(let v) = values[index] else { throw .invalidArguments("\(name) must be a uint64 (t)") }
        guard let value = Int64(exactly: v) else { throw .invalidArguments("\(name) is out of range") }
        return value
    }

    /// `Connect`'s options: `pending_until_cancelled` (b, default true),
    /// `timeout_s` (d, 0 < t ≤ 86400; required when not pending until
    /// cancelled), `services` (as), `strategies` (as, in order, each once, of
    /// `known-identifier`, `already-connected`, `scan`; default all three in
    /// that order). Unknown keys are refused.
    func connectOptions(_ index: Int) throws(ControlError) -> ConnectionOptions {
        guard case .dictionary(.string, .variant, let entries) = values[index] else {
            throw .invalidArguments("options must be a{sv}")
        }
        var pending = true
        var timeout: Double?
        var services: Set<BluetoothUUID> = []
        var strategies = Strategy.defaultOrder
        for entry in entries {
            guard case .string(let key) = entry.key, case .variant(let value) = entry.value else { throw .invalidArguments("options must be a{sv}") }
            switch (key, value) {
            case ("pending_until_cancelled", .boolean(let b)): pending = b
            case ("timeout_s", .double(let d)): timeout = d
            case ("services", .array(.string, let items)):
                guard items.count <= 64 else { throw .invalidArguments("services: at most 64 UUIDs") }
                for item in items { services.insert(try uuid(item, "services")) }
            case ("strategies", .array(.string, let items)):
                strategies = []
                for item in items {
                    switch item {
                    case .string("known-identifier"): strategies.append(.knownIdentifier)
                    case .string("already-connected"): strategies.append(.alreadyConnected)
                    case .string("scan"): strategies.append(.scan)
                    default: throw .invalidArguments("strategies: each is known-identifier, already-connected or scan")
                    }
                }
            case ("pending_until_cancelled", _), ("timeout_s", _), ("services", _), ("strategies", _):
                throw .invalidArguments("option \(key) has the wrong type (pending_until_cancelled: b, timeout_s: d, services: as, strategies: as)")
            default:
                throw .invalidArguments("unknown option \(key.prefix(64).debugDescription)")
            }
        }
        var deadline = ConnectionDeadline.pendingUntilCancelled
        if let timeout {
            guard timeout.isFinite, timeout > 0, timeout <= 86_400 else { throw .invalidArguments("timeout_s must be in (0, 86400]") }
            guard !pending || entries.contains(where: { $0.key == .string("pending_until_cancelled") }) == false else {
                throw .invalidArguments("timeout_s conflicts with pending_until_cancelled=true")
            }
            deadline = .after(.milliseconds(Int64((timeout * 1000).rounded(.up))))
        } else if !pending {
            throw .invalidArguments("timeout_s is required when pending_until_cancelled is false")
        }
        do { return try ConnectionOptions(strategies: strategies, deadline: deadline, services: services) } catch { throw .invalidArguments("\(error)") }
    }
}
