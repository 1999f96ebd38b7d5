public import DBus
public import RelinkModel

extension BlueZClient: HostingPort {
    /// Sets who answers the hosted applications' requests.
    public func setHostedRequestHandler(_ handler: @escaping HostedRequestHandler) {
        hosting.handler = handler
    }

    /// Exports and registers an application and its advertisement
    /// (``HostingPort/host(_:adapter:)``). The connection must be serving.
    /// - Throws: ``BlueZError`` or ``DBusError``.
    public func host(_ application: HostedApplication, adapter: ObjectPath) async throws {
        let handler = hosting.handler ?? { _, _ in .error(.unlikelyError) }
        try await unregister(root: application.root, adapter: adapter)
        if let old = hosting.applications[application.root] {
            for path in old.paths.reversed() { try connection.unexport(path) }
        }
        connection.addObjectManager(at: application.root)
        let objects = try application.objects(handler: handler)
        for object in objects { try connection.export(object) }
        hosting.applications[application.root] = (application, objects.map(\.path), nil)
        guard owner != nil, mirror.adapter(adapter)?.isOn == true else { return }
        hosting.applications[application.root]?.adapter = adapter
        if !application.services.isEmpty {
            try await call(adapter, BlueZInterface.gattManager, "RegisterApplication", [.objectPath(application.root), .dictionary(key: .string, value: .variant, [])],
                           tolerating: "org.bluez.Error.AlreadyExists")
        }
        if application.advertisement != nil {
            try await call(adapter, BlueZInterface.advertisingManager, "RegisterAdvertisement",
                           [.objectPath(application.advertisementPath), .dictionary(key: .string, value: .variant, [])],
                           tolerating: "org.bluez.Error.AlreadyExists")
        }
    }

    /// Registers a hosted application's advertisement alone
    /// (``HostingPort/registerAdvertisement(root:adapter:)``).
    /// - Throws: ``BlueZError`` or ``DBusError``.
    public func registerAdvertisement(root: ObjectPath, adapter: ObjectPath) async throws {
        guard let hosted = hosting.applications[root], hosted.application.advertisement != nil,
              owner != nil, mirror.adapter(adapter)?.isOn == true else { return }
        hosting.applications[root]?.adapter = adapter
        try await call(adapter, BlueZInterface.advertisingManager, "RegisterAdvertisement",
                       [.objectPath(hosted.application.advertisementPath), .dictionary(key: .string, value: .variant, [])],
                       tolerating: "org.bluez.Error.AlreadyExists")
    }

    /// Whether the application's services are registered on `adapter`
    /// (``HostingPort/servicesRegistered(root:adapter:)``).
    public func servicesRegistered(root: ObjectPath, adapter: ObjectPath) async -> Bool {
        guard let hosted = hosting.applications[root], owner != nil else { return false }
        return hosted.adapter == adapter && !hosted.application.services.isEmpty
    }

    /// Unregisters and removes an application (``HostingPort/unhost(root:adapter:)``).
    /// - Throws: ``BlueZError`` or ``DBusError``.
    public func unhost(root: ObjectPath, adapter: ObjectPath) async throws {
        try await unregister(root: root, adapter: adapter)
        guard let old = hosting.applications.removeValue(forKey: root) else { return }
        for path in old.paths.reversed() { try connection.unexport(path) }
    }

    /// Emits `PropertiesChanged(Value)` of a hosted characteristic, even
    /// for a value equal to the last (each update is a notification).
    /// - Throws: ``BlueZError`` (`DoesNotExist`) or ``DBusError``.
    public func notifyHosted(root: ObjectPath, _ key: CharacteristicKey, _ value: [UInt8]) async throws {
        guard let path = hosting.applications[root]?.application.characteristicPath(of: key) else {
            throw BlueZError(name: "org.bluez.Error.DoesNotExist", message: "\(key) is not hosted at \(root)")
        }
        try connection.emitSignal(path: path, interface: BlueZInterface.properties, member: "PropertiesChanged", arguments: [
            .string(BlueZInterface.gattCharacteristic),
            .dictionary(key: .string, value: .variant, [.init(.string("Value"), .variant(.array(.byte, value.map { .byte($0) })))]),
            .array(.string, []),
        ])
    }

    /// Unregisters what was registered at `root` ("does not exist" is
    /// success: a bluetoothd that restarted has forgotten it).
    private func unregister(root: ObjectPath, adapter: ObjectPath) async throws {
        guard let old = hosting.applications[root], let registeredOn = old.adapter, owner != nil else { return }
        hosting.applications[root]?.adapter = nil
        if old.application.advertisement != nil {
            try await call(registeredOn, BlueZInterface.advertisingManager, "UnregisterAdvertisement",
                           [.objectPath(old.application.advertisementPath)], tolerating: "org.bluez.Error.DoesNotExist")
        }
        if !old.application.services.isEmpty {
            try await call(registeredOn, BlueZInterface.gattManager, "UnregisterApplication", [.objectPath(root)], tolerating: "org.bluez.Error.DoesNotExist")
        }
    }

    private func call(_ adapter: ObjectPath, _ interface: String, _ method: String, _ arguments: [DBusValue], tolerating tolerated: String) async throws {
        do {
            try await BlueZError.mapping {
                _ = try await connection.callBlueZ(path: adapter, interface: interface, method: method, arguments: arguments)
            }
        } catch let e as BlueZError where e.name == tolerated {}
    }
}
