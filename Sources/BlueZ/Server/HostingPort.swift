public import DBus
public import RelinkModel

/// What relinkd's peripheral role needs of BlueZ: GATT applications and
/// advertisements it hosts for its clients, served on its own bus
/// connection and registered with bluetoothd. Part of ``BlueZPort``.
///
/// Registration is not kept by the port: bluetoothd forgets every
/// application and advertisement when it restarts (docs/real-bluez.md),
/// and the daemon decides when to register again (``host(_:adapter:)``
/// is idempotent).
public protocol HostingPort: Actor {
    /// Sets who answers the hosted applications' requests (before any ``host(_:adapter:)``).
    func setHostedRequestHandler(_ handler: @escaping HostedRequestHandler)
    /// Exports the application's objects (replacing what was exported at
    /// its root) and registers it and its advertisement with the adapter,
    /// anew (unregistering first): bluetoothd reads an application once.
    /// With the adapter off or bluetoothd absent the objects are exported
    /// and nothing is registered (no error): call it again when it is back.
    /// - Throws: ``BlueZError`` when bluetoothd refuses a registration
    ///   (the objects stay exported). The application is registered
    ///   before the advertisement: `org.bluez.Error.NotPermitted` ("Maximum
    ///   advertisements reached", bluetoothd 5.66 `src/advertising.c`) means
    ///   the services are registered and the controller has no advertising
    ///   instance left for the advertisement.
    func host(_ application: HostedApplication, adapter: ObjectPath) async throws
    /// Registers the advertisement of the application ``host(_:adapter:)``
    /// last exported at `root`, alone (its services stay as they are
    /// registered: a central connected to them sees no change). For an
    /// advertisement that did not fit the controller's instances when it
    /// was hosted. Nothing when the application has no advertisement, the
    /// adapter is off or bluetoothd is absent.
    /// - Throws: ``BlueZError``: `org.bluez.Error.NotPermitted` when the
    ///   controller still has no advertising instance left.
    func registerAdvertisement(root: ObjectPath, adapter: ObjectPath) async throws
    /// Whether the services of the application last hosted at `root` are
    /// registered with the running bluetoothd on `adapter` (false for an
    /// application without services, and after bluetoothd left). bluetoothd
    /// keeps a registration across a power cycle of the adapter, with the
    /// CCCD states of the bonded centrals subscribed to it
    /// (`src/gatt-database.c`): registering it anew would drop them.
    func servicesRegistered(root: ObjectPath, adapter: ObjectPath) async -> Bool
    /// Unregisters and removes the application at `root` (nothing when none is there).
    /// - Throws: ``BlueZError`` (unregistering: "does not exist" is success).
    func unhost(root: ObjectPath, adapter: ObjectPath) async throws
    /// Sends a value to the centrals subscribed to a hosted characteristic
    /// (a `PropertiesChanged` of its `Value`, which bluetoothd turns into
    /// notifications or indications); returns once it is handed to the bus.
    /// - Throws: ``BlueZError`` when the characteristic is not hosted.
    func notifyHosted(root: ObjectPath, _ key: CharacteristicKey, _ value: [UInt8]) async throws
}

/// What the BlueZ client hosts (its part of ``BlueZClient``'s state).
struct HostingState: Sendable {
    var handler: HostedRequestHandler?
    /// By root: the application and the paths of its exported objects.
    var applications: [ObjectPath: (application: HostedApplication, paths: [ObjectPath], adapter: ObjectPath?)] = [:]
}
