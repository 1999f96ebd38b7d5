extension Connection {
    /// Calls a method as ``call(destination:path:interface:method:arguments:timeout:)``
    /// does, and says whether the bus may start the destination.
    ///
    /// With `autoStart` false the call carries `NO_AUTO_START` (libdbus's
    /// `dbus_message_set_auto_start(msg, FALSE)`): when nobody owns
    /// `destination`, the bus answers at once with an error
    /// (`NameHasNoOwner` for a name it could activate, else `ServiceUnknown`) instead of
    /// trying to activate the service. A client of a system daemon that
    /// restarts on its own (bluetoothd under systemd) wants that: an
    /// activation attempt while the daemon is down fails (for example
    /// `Spawn.ChildExited` without systemd) or races its restart.
    /// - Throws: as ``call(destination:path:interface:method:arguments:timeout:)``;
    ///   with `autoStart` false, `NameHasNoOwner` or `ServiceUnknown` when
    ///   `destination` has no owner.
    public func call(
        destination: String?, path: ObjectPath, interface: String?, method: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(25), autoStart: Bool
    ) async throws -> Message {
        var m = try Message.methodCall(
            destination: destination, path: path, interface: interface, member: method, body: arguments)
        m.autoStart = autoStart
        return try await call(m, timeout: timeout)
    }
}
