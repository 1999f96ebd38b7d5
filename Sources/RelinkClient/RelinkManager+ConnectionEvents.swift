import DBus
import RelinkAPI

extension RelinkManager {
    /// `Central1.RegisterForConnectionEvents`: the identifier hears a
    /// `connection-event` each time a link to a peripheral that offers one
    /// of `services`, or is one of `peripherals` (addresses or peripheral
    /// UUIDs it may name), comes up or goes down, made by any program; the
    /// links up now are told at once. Replaces the identifier's previous
    /// registration; kept across restarts.
    /// - Throws: ``RelinkClientError``: `InvalidArguments` (neither given, a
    ///   malformed UUID or address, too many), `UnknownPeripheral`,
    ///   `UnknownIdentifier`, `StoreFailed`, `NotConnected`; unreachable.
    public func registerForConnectionEvents(_ identifier: String, services: [String] = [], peripherals: [String] = []) async throws(RelinkClientError) {
        let uuids = try RelinkArguments.bluetoothUUIDs(services)
        var named: [DBusValue] = []
        for peripheral in peripherals { named.append(.string(try RelinkArguments.peripheral(peripheral))) }
        let options: [String: DBusValue] = ["peripherals": .array(.string, named), "services": .array(.string, uuids.map { .string($0) })]
        _ = try await central(identifier, Central1Member.registerForConnectionEvents.rawValue, [options.variantDictionary])
    }

    /// `Central1.UnregisterForConnectionEvents`: no more `connection-event`s.
    /// - Throws: ``RelinkClientError``: `UnknownIdentifier`, `StoreFailed`, `NotConnected`; unreachable.
    public func unregisterForConnectionEvents(_ identifier: String) async throws(RelinkClientError) {
        _ = try await central(identifier, Central1Member.unregisterForConnectionEvents.rawValue, [])
    }
}

extension RelinkCentral {
    /// Hear a `connection-event` each time a link to a peripheral that
    /// offers one of `services`, or is one of `peripherals`, comes up or
    /// goes down, made by any program (CoreBluetooth's
    /// `registerForConnectionEvents(options:)`, matching by service and
    /// peripheral UUIDs); see ``RelinkManager/registerForConnectionEvents(_:services:peripherals:)``.
    /// - Throws: ``RelinkClientError``.
    public func registerForConnectionEvents(services: [String] = [], peripherals: [String] = []) async throws(RelinkClientError) {
        try await connected().registerForConnectionEvents(restoreIdentifier, services: services, peripherals: peripherals)
    }

    /// No more `connection-event`s.
    /// - Throws: ``RelinkClientError``.
    public func unregisterForConnectionEvents() async throws(RelinkClientError) {
        try await connected().unregisterForConnectionEvents(restoreIdentifier)
    }
}
