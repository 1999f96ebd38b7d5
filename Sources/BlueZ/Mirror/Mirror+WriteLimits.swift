public import DBus
public import RelinkModel

extension Mirror {
    /// The ATT MTU bluetoothd reports for a device's link: the `MTU`
    /// property of its characteristics (one bearer, so one value; the
    /// largest is taken should they differ while an exchange is signalled).
    /// Nil when no characteristic carries it (no link, services not
    /// resolved, or a bluetoothd older than 5.62).
    public func attMTU(of device: ObjectPath) -> Int? {
        var found: Int?
        for service in services(of: device) {
            for c in characteristics(of: service.path) {
                if let mtu = c.mtu { found = max(found ?? 0, mtu) }
            }
        }
        return found
    }

    /// The largest values per write type for a connected device, from its
    /// link's MTU (``attMTU(of:)``); nil when the device is not connected
    /// with its services resolved, or no MTU is known.
    public func writeLimits(of device: ObjectPath) -> WriteLimits? {
        guard let d = self.device(device), d.connected, d.servicesResolved, let mtu = attMTU(of: device) else { return nil }
        return WriteLimits(mtu: mtu)
    }
}
