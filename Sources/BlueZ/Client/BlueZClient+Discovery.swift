public import DBus
public import RelinkModel

extension BlueZClient {
    /// Starts discovery on an adapter with a filter, and keeps it going:
    /// the filter and the session are re-applied whenever bluetoothd drops
    /// them (adapter power cycle, bluetoothd restart).
    /// - Throws: ``BlueZError``: `notSupported` for a filter bluetoothd
    ///   rejects (`InvalidArguments`), `notReady` when the adapter is off
    ///   (discovery then starts by itself once it is powered),
    ///   `deviceGone` for an unknown adapter, `transient` with
    ///   ``BlueZError/isServiceUnavailable`` while bluetoothd is not on the bus (nothing is sent then; discovery
    ///   starts when it is back).
    public func startDiscovery(adapter: ObjectPath, filter: DiscoveryFilter) async throws {
        try filter.validate()
        wantedDiscovery[adapter] = filter
        if isReady, owner == nil {
            throw BlueZError(name: DBusError.Name.serviceUnknown.rawValue,
                             message: "bluetoothd is not on the bus; discovery starts when org.bluez is back")
        }
        if let a = mirror.adapter(adapter), !a.isOn {
            throw BlueZError(name: "org.bluez.Error.NotReady", message: "adapter \(adapter) is powered off; discovery starts when it is powered")
        }
        try await applyDiscovery(adapter: adapter, filter: filter)
    }

    /// Stops discovery on an adapter and forgets the wish.
    /// - Throws: ``BlueZError`` from `StopDiscovery`, except "not
    ///   discovering", which is success.
    public func stopDiscovery(adapter: ObjectPath) async throws {
        // Without bluetoothd there is no discovery session to stop.
        discoverySessions.remove(adapter)
        guard wantedDiscovery.removeValue(forKey: adapter) != nil, !isReady || owner != nil else { return }
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(path: adapter, interface: BlueZInterface.adapter, method: "StopDiscovery")
            }
        } catch let e as BlueZError where e.name == "org.bluez.Error.Failed" || e.name == "org.bluez.Error.NotReady" || e.failureClass == .deviceGone {
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
            discoverySessions.insert(adapter)
        } catch let e as BlueZError where e.failureClass == .inProgress {
            // bluetoothd says `InProgress` both when this client already
            // discovers (then the new filter applies) and, in 5.66, when
            // the kernel refused to start (MGMT Busy: still running the
            // scan of a bluetoothd that was killed); it then drops the
            // client, and no discovery runs for it. Without a session of
            // ours, it is the latter: tried again until it starts.
            guard discoverySessions.contains(adapter) else {
                retryDiscovery(adapter: adapter)
                throw e
            }
        }
        logger.info("discovery started", metadata: ["adapter": "\(adapter)", "uuids": "\(filter.services.sorted().map(\.string))", JournalField.event.rawValue: "discovery-started"])
    }

    /// Delays between attempts to start a discovery bluetoothd refused as
    /// busy; the last one repeats.
    static let discoveryRetryDelays: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4)]

    /// Starts the wanted discovery again after a delay, until it starts or
    /// is no longer wanted or possible (stopped, adapter off, bluetoothd
    /// gone: the usual re-application takes over then). One retry loop per
    /// adapter.
    func retryDiscovery(adapter: ObjectPath) {
        guard discoveryRetries.insert(adapter).inserted else { return }
        logger.notice("bluetoothd refused to start discovery (busy); retrying", metadata: .journal([.event: "discovery-busy"]))
        Task { [self] in
            defer { discoveryRetries.remove(adapter) }
            var attempt = 0
            while !Task.isCancelled {
                let delays = Self.discoveryRetryDelays
                do { try await Task.sleep(for: delays[min(attempt, delays.count - 1)]) } catch { return }
                attempt += 1
                guard let filter = wantedDiscovery[adapter], owner != nil, mirror.adapter(adapter)?.isOn == true,
                      !discoverySessions.contains(adapter) else { return }
                do {
                    try await applyDiscovery(adapter: adapter, filter: filter)
                    return
                } catch let e as BlueZError where e.failureClass == .inProgress {
                    continue
                } catch {
                    logger.warning("cannot resume discovery", metadata: ["adapter": "\(adapter)", JournalField.error.rawValue: "\(error)"])
                    return
                }
            }
        }
    }
}
