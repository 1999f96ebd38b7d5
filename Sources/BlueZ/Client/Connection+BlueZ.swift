import DBus

extension Connection {
    /// Calls a method of bluetoothd (`org.bluez`) with `NO_AUTO_START`:
    /// while bluetoothd is down the bus answers at once with an error
    /// (`NameHasNoOwner` for a name it could activate, else `ServiceUnknown`)
    /// instead of trying to start it (on a system without systemd that
    /// fails with `Spawn.ChildExited` after a launch attempt, and under
    /// systemd it would race bluetoothd's own restart). The BlueZ layer
    /// follows `org.bluez`'s owner and re-applies its state when it is back.
    /// - Throws: as ``Connection/call(destination:path:interface:method:arguments:timeout:autoStart:)``.
    func callBlueZ(
        path: ObjectPath, interface: String, method: String, arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws -> Message {
        try await call(destination: BlueZInterface.service, path: path, interface: interface, method: method,
                       arguments: arguments, timeout: timeout, autoStart: false)
    }
}
