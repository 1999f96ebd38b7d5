public import BlueZ
public import DBus
public import RelinkModel

// The controller's advertising-instance limit (issue 23): bluetoothd 5.66
// gives each registered advertisement an instance and refuses one past the
// controller's number with `NotPermitted` "Maximum advertisements reached"
// (`src/advertising.c`); `LEAdvertisingManager1.SupportedInstances` is what
// is left, `ActiveInstances` what is taken.
extension FakeBlueZ {
    /// Sets the controller's number of advertising instances (nil: no
    /// limit, the default). Advertisements already registered stay.
    public func setAdvertisingInstances(_ instances: Int?) {
        hosting.advertisingInstances = instances
    }

    /// `LEAdvertisingManager1.ActiveInstances`.
    public var activeAdvertisingInstances: Int { hosting.advertisements.count }

    /// Registers the advertisement of the application exported at `root`
    /// alone (``HostingPort/registerAdvertisement(root:adapter:)``).
    public func registerAdvertisement(root: ObjectPath, adapter: ObjectPath) async throws {
        hosting.hostingCalls += 1
        guard adapterUsable, hosting.exported[root]?.advertisement != nil else { return }
        try registerAdvertisement(root)
    }

    /// Takes an instance for the advertisement at `root`, as bluetoothd.
    func registerAdvertisement(_ root: ObjectPath) throws {
        guard !hosting.advertisements.contains(root) else { return }
        if let limit = hosting.advertisingInstances, hosting.advertisements.count >= limit {
            throw BlueZError(name: "org.bluez.Error.NotPermitted", message: "Maximum advertisements reached")
        }
        hosting.advertisements.insert(root)
        hosting.registrations.append((root, true))
    }
}
