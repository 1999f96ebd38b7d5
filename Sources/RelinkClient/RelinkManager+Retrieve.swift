import DBus
import RelinkAPI

/// A peripheral `RetrievePeripherals` or `RetrieveConnectedPeripherals`
/// found (CoreBluetooth's retrieved `CBPeripheral`).
public struct RelinkRetrievedPeripheral: Sendable, Hashable {
    /// Its `Peripheral1` object, `/org/relink/peripheral/<uuid>`.
    public var object: String
    /// Its peripheral UUID.
    public var id: String
    /// Its Bluetooth address, `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// The name the identifier's name rule resolves ("" when none is known).
    public var name: String
    /// Whether bluetoothd shows it connected now (by any program).
    public var connected: Bool
    /// The service UUIDs known for it.
    public var services: [String]

    /// Decodes one entry of the reply.
    /// - Throws: ``RelinkClientError`` (`Failed`) when a key relinkd always sends is missing.
    init(_ entry: [String: DBusValue], _ method: String) throws(RelinkClientError) {
        let r = PropertyReader(method, entry)
        if let path = try r.optional("object", ObjectPath.self) { object = path.rawValue } else { object = try r.value("object", default: "") }
        id = try r.required("id")
        address = try r.value("address", default: "")
        name = try r.value("name", default: "")
        connected = try r.value("connected", default: false)
        services = try r.value("services", default: [])
    }
}

extension RelinkManager {
    /// `Central1.RetrievePeripherals`: those of `peripherals` (addresses or
    /// peripheral UUIDs) relinkd knows and the caller may name, in the
    /// order given; the others are left out.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `NotConnected`; unreachable.
    public func retrievePeripherals(_ identifier: String, _ peripherals: [String]) async throws(RelinkClientError) -> [RelinkRetrievedPeripheral] {
        var texts: [DBusValue] = []
        for peripheral in peripherals { texts.append(.string(try RelinkArguments.peripheral(peripheral))) }
        let reply = try await central(identifier, Central1Member.retrievePeripherals.rawValue, [.array(.string, texts)])
        return try retrieved(reply, "RetrievePeripherals")
    }

    /// `Central1.RetrieveConnectedPeripherals`: the devices connected to
    /// the system (by any program) that offer one of `services`.
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (no service, or
    ///   a malformed UUID), `UnknownIdentifier`, `NotConnected`; unreachable.
    public func retrieveConnectedPeripherals(_ identifier: String, services: [String]) async throws(RelinkClientError) -> [RelinkRetrievedPeripheral] {
        let uuids = try RelinkArguments.bluetoothUUIDs(services)
        let reply = try await central(identifier, Central1Member.retrieveConnectedPeripherals.rawValue, [.array(.string, uuids.map { .string($0) })])
        return try retrieved(reply, "RetrieveConnectedPeripherals")
    }

    private func retrieved(_ reply: Message, _ method: String) throws(RelinkClientError) -> [RelinkRetrievedPeripheral] {
        var found: [RelinkRetrievedPeripheral] = []
        let entries: [[String: DBusValue]] = try decode(reply, method, [[String: DBusValue]].self)
        for entry in entries { found.append(try RelinkRetrievedPeripheral(entry, method)) }
        return found
    }
}

extension RelinkCentral {
    /// The peripherals relinkd knows among `peripherals` (addresses or
    /// peripheral UUIDs, as its events named them), in the order given
    /// (CoreBluetooth's `retrievePeripherals(withIdentifiers:)`). Nothing is
    /// started: `connect(peripheral:options:)` with the already-connected
    /// strategy adopts one that is connected.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `NotConnected`; unreachable.
    public func retrievePeripherals(_ peripherals: [String]) async throws(RelinkClientError) -> [RelinkRetrievedPeripheral] {
        try await connected().retrievePeripherals(restoreIdentifier, peripherals)
    }

    /// The peripherals connected to the system, by any program, that offer
    /// one of `services` (CoreBluetooth's
    /// `retrieveConnectedPeripherals(withServices:)`); this identifier may
    /// name them from now on, as if it had discovered them.
    /// - Throws: ``RelinkClientError``: `InvalidArguments`, `UnknownIdentifier`, `NotConnected`; unreachable.
    public func retrieveConnectedPeripherals(services: [String]) async throws(RelinkClientError) -> [RelinkRetrievedPeripheral] {
        try await connected().retrieveConnectedPeripherals(restoreIdentifier, services: services)
    }
}
