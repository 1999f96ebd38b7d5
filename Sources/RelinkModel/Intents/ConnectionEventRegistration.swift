/// What a restore identifier asked to hear of links made and lost at the
/// system level, by any program (`Central1.RegisterForConnectionEvents`,
/// CoreBluetooth's `registerForConnectionEvents(options:)`): the peripherals
/// that offer one of `services` or are one of `peripherals`. Durable like
/// the identifier's other requests; `told` keeps, across restarts, which
/// matching peripherals it was last told connected, so that each of them
/// is told its `peer-disconnected` once, even when the link ended while
/// relinkd was not running.
public struct ConnectionEventRegistration: Sendable, Hashable, Codable {
    /// Service UUIDs: a peripheral that offers one of them matches.
    public var services: Set<BluetoothUUID>
    /// Peripherals that match whatever they offer.
    public var peripherals: Set<PeripheralID>
    /// The matching peripherals the identifier was told `peer-connected`
    /// and not `peer-disconnected` since.
    public var told: Set<PeripheralID>

    /// A registration.
    public init(services: Set<BluetoothUUID> = [], peripherals: Set<PeripheralID> = [], told: Set<PeripheralID> = []) {
        self.services = services
        self.peripherals = peripherals
        self.told = told
    }

    /// Whether a peripheral offering `offered` matches: it is one of
    /// ``peripherals``, or it offers one of ``services``.
    public func matches(_ peripheral: PeripheralID, offering offered: Set<BluetoothUUID>) -> Bool {
        peripherals.contains(peripheral) || !services.isDisjoint(with: offered)
    }
}
