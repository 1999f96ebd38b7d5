public import DBus
public import RelinkModel

extension BlueZClient {
    /// Starts discovery on an adapter with a filter, and keeps it going:
    /// the filter and the session are re-applied whenever bluetoothd drops
    /// them (adapter power cycle, bluetoothd restart).
    /// - Throws: ``BlueZError``: `notSupported` for a filter bluetoothd
    ///   rejects (`InvalidArguments`), `notReady` when the adapter is off
    ///   (discovery then starts by itself once it is powered),
    ///   `deviceGone` for an unknown adapter, `serviceUnavailable` while
    ///   bluetoothd is not on the bus (nothing is sent then; discovery
    ///   starts when it is back).
    public func startDiscovery(adapter: ObjectPath, filter: DiscoveryFilter) async throws {
        try filter.validate()
        wantedDiscovery[adapter] = filter
        if isReady, owner == nil {
            throw BlueZError(name: DBusError.Name.serviceUnknown.rawValue,
                             message: "bluetoothd is not on the bus; discovery starts when org.bluez is back")
        }
        if let a = mirror.adapter(adapter), !a.powered {
            throw BlueZError(name: "org.bluez.Error.NotReady", message: "adapter \(adapter) is powered off; discovery starts when it is powered")
        }
        try await applyDiscovery(adapter: adapter, filter: filter)
    }

    /// Stops discovery on an adapter and forgets the wish.
    /// - Throws: ``BlueZError`` from `StopDiscovery`, except "not
    ///   discovering", which is success.
    public func stopDiscovery(adapter: ObjectPath) async throws {
        // Without bluetoothd there is no discovery session to stop.
        guard wantedDiscovery.removeValue(forKey: adapter) != nil, !isReady || owner != nil else { return }
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(path: adapter, interface: BlueZInterface.adapter, method: "StopDiscovery")
            }
        } catch let e as BlueZError where e.name == "org.bluez.Error.Failed" || e.name == "org.bluez.Error.NotReady" || e.errorClass == .deviceGone {
            // Not discovering (or no longer an adapter): nothing to stop.
        }
    }

    /// The filter relink currently wants on each adapter.
    public var discoveryWanted: [ObjectPath: DiscoveryFilter] { wantedDiscovery }

    func applyDiscovery(adapter: ObjectPath, filter: DiscoveryFilter) async throws {
        try await BlueZError.mapping {
            _ = try await connection.callBlueZ(
                path: adapter, interface: BlueZInterface.adapter,
                method: "SetDiscoveryFilter", arguments: [filter.dbusValue])
        }
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(path: adapter, interface: BlueZInterface.adapter, method: "StartDiscovery")
            }
        } catch let e as BlueZError where e.errorClass == .inProgress {
            // Already discovering for this client: the new filter applies.
        }
        logger.info("discovery started", metadata: ["adapter": "\(adapter)", "uuids": "\(filter.services.sorted().map(\.string))", JournalField.event.rawValue: "discovery-started"])
    }
}
