public import RelinkModel

/// The policy for bluetoothd's background auto-connect, which relinkd asks
/// for through one GATT profile whose services bluetoothd reads once, at
/// registration, and which works by service, not by device.
///
/// * Devices are held by the intents that ask (`useBackgroundAutoConnect`),
///   each with its intent's services, or, when the intent names none, the
///   services of the device's subscribed characteristics.
/// * Requests during one input are gathered: the profile is registered at
///   most once per input (``takeRenewal()``), since a registration costs
///   several bus round trips and a power cycle makes every intent ask.
/// * A registration is needed when the service set changed, or anew
///   (`renew`) when bluetoothd may have forgotten it; none while nothing is
///   held and nothing is registered.
/// * A registration puts every known device offering a registered service
///   back on the kernel's list: devices no live intent wants are released
///   again (``unwanted(_:wanted:)``).
///
/// Pure: the daemon carries out the registrations and releases.
public struct AutoConnectPolicy: Sendable, Hashable {
    /// Held devices with the services their intent asked for (empty: by subscriptions).
    public private(set) var held: [BluetoothAddress: Set<BluetoothUUID>] = [:]
    /// The UUIDs of the last registration, nil before any.
    public private(set) var registered: [String]?
    /// An action of the current input asked for a (re-)registration.
    public private(set) var renewalRequested = false

    /// Nothing held, nothing registered.
    public init() {}

    /// An intent asks for background auto-connect of `address`.
    public mutating func hold(_ address: BluetoothAddress, services: Set<BluetoothUUID>) {
        held[address] = services
        renewalRequested = true
    }

    /// An intent no longer holds `address`.
    public mutating func release(_ address: BluetoothAddress) { held[address] = nil }

    /// Whether `address` is held.
    public func isHeld(_ address: BluetoothAddress) -> Bool { held[address] != nil }

    /// Asks for a registration at the end of the current input.
    public mutating func requestRenewal() { renewalRequested = true }

    /// Takes the gathered request: true when one was made since the last take.
    public mutating func takeRenewal() -> Bool {
        defer { renewalRequested = false }
        return renewalRequested
    }

    /// The services to auto-connect by: each held device's services, or
    /// the services of its subscriptions (`subscribed`) when it names none.
    public func services(subscribed: (BluetoothAddress) -> Set<BluetoothUUID>) -> Set<BluetoothUUID> {
        var all: Set<BluetoothUUID> = []
        for (address, services) in held {
            all.formUnion(services.isEmpty ? subscribed(address) : services)
        }
        return all
    }

    /// The UUIDs to register for `services`, nil when no registration is
    /// needed (unchanged and not `renew`, or nothing held and nothing registered).
    public func registration(for services: Set<BluetoothUUID>, renew: Bool) -> [String]? {
        let uuids = services.map(\.string).sorted()
        if uuids.isEmpty && (registered ?? []).isEmpty { return nil }
        guard renew || uuids != (registered ?? []) else { return nil }
        return uuids
    }

    /// The registration of `uuids` succeeded.
    public mutating func didRegister(_ uuids: [String]) { registered = uuids }

    /// Whether a device offering `services` is on bluetoothd's list by the last registration.
    public func covers(_ services: [String]) -> Bool {
        let registered = Set((self.registered ?? []).map { $0.lowercased() })
        return !registered.isEmpty && !registered.isDisjoint(with: services.map { $0.lowercased() })
    }

    /// The addresses among `candidates` that no live intent wants, sorted:
    /// those to take off bluetoothd's list again.
    public static func unwanted(_ candidates: [String], wanted: Set<String>) -> [String] {
        candidates.filter { !wanted.contains($0) }.sorted()
    }
}
