public import DBus

extension BlueZClient {
    /// Connects a device. Returns when the link is up; `ServicesResolved`
    /// may come later (see ``waitForServices(_:timeout:)``).
    /// - Parameter timeout: the D-Bus call timeout; the kernel gives up on
    ///   an LE connect after 20 s (40 s on newer kernels), so keep it above.
    /// - Throws: ``BlueZError``: `transient` for "le-connection-abort-by-local"
    ///   (out of range and timeouts look the same), `inProgress`,
    ///   `notReady`, `deviceGone` (`UnknownObject`); `transient` with
    ///   ``BlueZError/isServiceUnavailable`` when bluetoothd is absent or silent.
    ///
    /// Returns only once the mirror has seen the link up (or was already
    /// connected), so that a following ``waitForServices(_:timeout:)`` or
    /// lookup sees it. When no `Connected=true` has been signalled by the
    /// time `Connect` replies, the link state is read from bluetoothd
    /// (``refreshLinkState(_:)``): real bluetoothd 5.66 never signals it
    /// for the central-side Device1 (issue 20 finding 2).
    public func connect(_ device: ObjectPath, timeout: Duration = .seconds(45)) async throws {
        let upsBefore = linkUps[device, default: 0]
        try await BlueZError.mapping {
            _ = try await connection.callBlueZ(path: device, interface: BlueZInterface.device, method: "Connect", timeout: timeout)
        }
        guard !linkSeen(device, since: upsBefore) else { return }
        try await refreshLinkState(device)
        guard mirror.device(device) != nil else {
            throw BlueZError(name: DBusError.Name.unknownObject.rawValue, message: "device \(device) is gone")
        }
        guard linkSeen(device, since: upsBefore) else {
            throw BlueZError(name: "org.bluez.Error.NotConnected", message: "the link to \(device) was down again right after Connect succeeded")
        }
    }

    /// Whether the mirror shows the link up, or has seen it come up since
    /// `upsBefore` (a method reply can overtake the signals sent before it,
    /// so it may already be down again).
    private func linkSeen(_ device: ObjectPath, since upsBefore: UInt64) -> Bool {
        mirror.device(device)?.connected == true || linkUps[device, default: 0] != upsBefore
    }

    /// Reads a device's `Connected` and `ServicesResolved` from bluetoothd
    /// (`Properties.GetAll`) and applies those that differ from the mirror
    /// as if they had been signalled, so the same events follow.
    /// - Throws: ``BlueZError`` (`deviceGone` when the object is gone).
    public func refreshLinkState(_ device: ObjectPath) async throws {
        let all = try await BlueZError.mapping {
            let reply = try await connection.callBlueZ(
                path: device, interface: BlueZInterface.properties, method: "GetAll", arguments: [.string(BlueZInterface.device)],
                timeout: .seconds(10))
            guard let body = reply.body.first else { throw DBusError(.invalidArgs, "empty GetAll reply") }
            return try body.interfaceProperties()
        }
        guard let current = mirror.device(device) else { return }
        var changed: InterfaceProperties = [:]
        if let up = all.bool("Connected"), up != current.connected { changed["Connected"] = .boolean(up) }
        if let resolved = all.bool("ServicesResolved"), resolved != current.servicesResolved {
            changed["ServicesResolved"] = .boolean(resolved)
        }
        guard !changed.isEmpty else { return }
        logger.debug("link state read from bluetoothd: no signal had told it", metadata: ["device": "\(device)", "changed": "\(changed.keys.sorted())"])
        applyRead(device, changed)
    }

    /// Disconnects a device (cancelling a pending Connect, which then fails
    /// with "br-connection-canceled").
    /// - Throws: ``BlueZError``; "not connected" is success.
    public func disconnect(_ device: ObjectPath) async throws {
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(path: device, interface: BlueZInterface.device, method: "Disconnect")
            }
        } catch let e as BlueZError where e.name == "org.bluez.Error.NotConnected" {}
    }

    /// Waits until the device is connected with its services resolved.
    /// - Throws: ``BlueZError``: `timeout`; `transient` when the link drops
    ///   while waiting.
    public func waitForServices(_ device: ObjectPath, timeout: Duration = .seconds(30)) async throws {
        try await wait(timeout: timeout, "ServicesResolved on \(device)") { m in
            guard let d = m.device(device) else { return true }
            return d.servicesResolved || !d.connected
        }
        guard let d = mirror.device(device) else {
            throw BlueZError(name: DBusError.Name.unknownObject.rawValue, message: "device \(device) is gone")
        }
        guard d.connected else {
            throw BlueZError(name: "org.bluez.Error.NotConnected", message: "link to \(device) dropped before services were resolved")
        }
    }

    /// Reads a characteristic's value.
    /// - Throws: ``BlueZError`` (`notPermitted` for "Read not permitted",
    ///   `transient` when not connected, `deviceGone`).
    public func read(_ characteristic: ObjectPath, timeout: Duration = .seconds(10)) async throws -> [UInt8] {
        try await BlueZError.mapping {
            let reply = try await connection.callBlueZ(
                path: characteristic, interface: BlueZInterface.gattCharacteristic,
                method: "ReadValue", arguments: [.dictionary(key: .string, value: .variant, [])], timeout: timeout)
            guard let value = reply.body.first else { throw DBusError(.invalidArgs, "empty ReadValue reply") }
            return try value.decode()
        }
    }

    /// Writes a characteristic's value, with response (`request`) or
    /// without (`command`).
    /// - Throws: ``BlueZError``.
    public func write(_ characteristic: ObjectPath, _ value: [UInt8], withResponse: Bool = true, timeout: Duration = .seconds(10)) async throws {
        let options: DBusValue = .dictionary(key: .string, value: .variant, [
            .init(.string("type"), .variant(.string(withResponse ? "request" : "command"))),
        ])
        try await BlueZError.mapping {
            _ = try await connection.callBlueZ(
                path: characteristic, interface: BlueZInterface.gattCharacteristic,
                method: "WriteValue", arguments: [.array(.byte, value.map { .byte($0) }), options], timeout: timeout)
        }
    }

    /// Starts notifications: values then arrive as
    /// ``MirrorEvent/valueUpdated(_:)``. A second
    /// call is success. bluetoothd ends the session when this client leaves
    /// the bus, so call it again after a restart or a reset.
    /// - Throws: ``BlueZError``.
    public func startNotify(_ characteristic: ObjectPath) async throws {
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(path: characteristic, interface: BlueZInterface.gattCharacteristic, method: "StartNotify")
            }
        } catch let e as BlueZError where e.failureClass == .inProgress {}
    }

    /// Stops notifications. Not notifying is success.
    /// - Throws: ``BlueZError``.
    public func stopNotify(_ characteristic: ObjectPath) async throws {
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(path: characteristic, interface: BlueZInterface.gattCharacteristic, method: "StopNotify")
            }
        } catch let e as BlueZError where e.name == "org.bluez.Error.Failed" && e.message.lowercased().contains("no notify session") {}
    }

    /// Takes notifications through a socket instead of D-Bus signals (for
    /// high rates). Only while connected, and not together with StartNotify.
    /// - Returns: the socket and its MTU; the socket closes on disconnect.
    /// - Throws: ``BlueZError`` (`notSupported`, `notPermitted`, `inProgress`).
    public func acquireNotify(_ characteristic: ObjectPath) async throws -> (UnixFD, UInt16) {
        try await BlueZError.mapping {
            let reply = try await connection.callBlueZ(
                path: characteristic, interface: BlueZInterface.gattCharacteristic,
                method: "AcquireNotify", arguments: [.dictionary(key: .string, value: .variant, [])])
            guard reply.body.count == 2, case .unixFD(let fd) = reply.body[0] else {
                throw DBusError(.invalidArgs, "AcquireNotify replied '\(reply.signature)', expected 'hq'")
            }
            return (fd, try reply.body[1].decode(as: UInt16.self))
        }
    }

    /// Takes writes without response through a socket (`AcquireWrite`; see
    /// ``BlueZPort/acquireWrite(_:)``). bluetoothd may delay the reply until
    /// the link's MTU exchange is done.
    /// - Throws: ``BlueZError``.
    public func acquireWrite(_ characteristic: ObjectPath) async throws -> AcquiredWrite {
        try await BlueZError.mapping {
            let reply = try await connection.callBlueZ(
                path: characteristic, interface: BlueZInterface.gattCharacteristic,
                method: "AcquireWrite", arguments: [.dictionary(key: .string, value: .variant, [])])
            guard reply.body.count == 2, case .unixFD(let fd) = reply.body[0] else {
                throw DBusError(.invalidArgs, "AcquireWrite replied '\(reply.signature)', expected 'hq'")
            }
            return AcquiredWrite(socket: fd, mtu: Int(try reply.body[1].decode(as: UInt16.self)))
        }
    }

    /// Marks a device trusted, so that a Disconnect does not turn off its
    /// background auto-connect.
    /// - Throws: ``BlueZError``.
    public func setTrusted(_ device: ObjectPath, _ trusted: Bool) async throws {
        try await BlueZError.mapping {
            _ = try await connection.callBlueZ(
                path: device, interface: BlueZInterface.properties, method: "Set",
                arguments: [.string(BlueZInterface.device), .string("Trusted"), .variant(.boolean(trusted))])
        }
    }

    /// Powers an adapter on or off.
    /// - Throws: ``BlueZError``.
    public func setPowered(_ adapter: ObjectPath, _ on: Bool) async throws {
        try await BlueZError.mapping {
            _ = try await connection.callBlueZ(
                path: adapter, interface: BlueZInterface.properties, method: "Set",
                arguments: [.string(BlueZInterface.adapter), .string("Powered"), .variant(.boolean(on))])
        }
    }

    /// Removes a device from bluetoothd's cache (evicts it).
    /// - Throws: ``BlueZError``.
    public func removeDevice(_ device: ObjectPath, from adapter: ObjectPath) async throws {
        try await BlueZError.mapping {
            _ = try await connection.callBlueZ(
                path: adapter, interface: BlueZInterface.adapter,
                method: "RemoveDevice", arguments: [.objectPath(device)])
        }
    }
}
