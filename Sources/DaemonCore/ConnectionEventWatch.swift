public import RelinkModel

/// Who hears of links made and lost at the system level
/// (`connection-event`, CoreBluetooth's `centralManager(_:connectionEventDidOccur:for:)`),
/// as one value with no I/O: each identifier's
/// ``ConnectionEventRegistration`` and which matching peripherals it was told
/// connected. Every decision returns a ``Told``: the events, and the
/// registrations whose `told` set changed, to store in the same commit.
public struct ConnectionEventWatch: Sendable, Hashable {
    /// Each registered identifier's registration.
    public private(set) var registrations: [RestoreIdentifier: ConnectionEventRegistration] = [:]
    /// The last address seen of each told peripheral, named in its
    /// `peer-disconnected` when the link ended unseen.
    public private(set) var addresses: [PeripheralID: BluetoothAddress] = [:]

    /// A watch with nothing registered.
    public init() {}

    /// A peripheral's link as bluetoothd shows it.
    public struct PeerLink: Sendable, Hashable {
        /// The peripheral (stored: the daemon makes one for a device that matches a registration).
        public var peripheral: PeripheralID
        /// Its address.
        public var address: BluetoothAddress
        /// The services its device offers now (its `UUIDs`).
        public var services: Set<BluetoothUUID>
        /// Whether it is connected.
        public var connected: Bool

        /// A peer link.
        public init(peripheral: PeripheralID, address: BluetoothAddress, services: Set<BluetoothUUID>, connected: Bool) {
            self.peripheral = peripheral
            self.address = address
            self.services = services
            self.connected = connected
        }
    }

    /// What to tell and store.
    public struct Told: Sendable {
        /// Each event with the identifier it is for, in order.
        public var events: [(RestoreIdentifier, RelinkEvent)]
        /// The registrations whose `told` set changed, to store with the events.
        public var registrations: [RestoreIdentifier: ConnectionEventRegistration]

        /// Nothing to tell.
        public init(events: [(RestoreIdentifier, RelinkEvent)] = [], registrations: [RestoreIdentifier: ConnectionEventRegistration] = [:]) {
            self.events = events
            self.registrations = registrations
        }

        /// Whether there is nothing to tell or store.
        public var isEmpty: Bool { events.isEmpty && registrations.isEmpty }
    }

    /// Whether a device relinkd knows no peripheral for, offering `services`,
    /// matches a registration (the daemon then stores a peripheral for it).
    public func wantsUnknown(offering services: Set<BluetoothUUID>) -> Bool {
        !services.isEmpty && registrations.values.contains { !$0.services.isDisjoint(with: services) }
    }

    /// The stored registrations, as start-up loads them, with the stored
    /// addresses of the peripherals they were told connected.
    public mutating func load(_ stored: [RestoreIdentifier: ConnectionEventRegistration], addresses: [PeripheralID: BluetoothAddress]) {
        registrations = stored
        self.addresses = addresses
    }

    /// The registration that replaces the identifier's (if any) for
    /// `services` and `peripherals`, with `connectedNow` the links up now:
    /// what it was told and still matches stays told; a matching link it
    /// was not told of is told `peer-connected` now, so a program's picture
    /// starts complete. Nothing changes until ``stored(_:_:)``.
    public func registering(_ id: RestoreIdentifier, services: Set<BluetoothUUID>, peripherals: Set<PeripheralID>,
                            connectedNow: [PeerLink]) -> (ConnectionEventRegistration, Told) {
        var registration = ConnectionEventRegistration(services: services, peripherals: peripherals)
        let before = registrations[id]?.told ?? []
        var events: [(RestoreIdentifier, RelinkEvent)] = []
        for link in connectedNow.sorted(by: { $0.peripheral < $1.peripheral })
        where link.connected && registration.matches(link.peripheral, offering: link.services) {
            registration.told.insert(link.peripheral)
            if !before.contains(link.peripheral) { events.append((id, Self.connected(link))) }
        }
        return (registration, Told(events: events, registrations: [id: registration]))
    }

    /// The identifier's registration was stored (nil: removed, or the identifier is gone).
    public mutating func stored(_ id: RestoreIdentifier, _ registration: ConnectionEventRegistration?, connectedNow: [PeerLink] = []) {
        registrations[id] = registration
        for link in connectedNow where registration?.told.contains(link.peripheral) == true { addresses[link.peripheral] = link.address }
    }

    /// A peripheral's link came up, went down, or its services became
    /// known: each registration that matches a link now up and was not told
    /// hears `peer-connected`; each that was told of a link now down hears
    /// `peer-disconnected`, with `reason`.
    public mutating func observed(_ link: PeerLink, reason: ConnectionFailure?) -> Told {
        var told = Told()
        for id in registrations.keys.sorted() {
            guard var registration = registrations[id] else { continue }
            if link.connected, registration.matches(link.peripheral, offering: link.services), registration.told.insert(link.peripheral).inserted {
                addresses[link.peripheral] = link.address
                told.events.append((id, Self.connected(link)))
            } else if !link.connected, registration.told.remove(link.peripheral) != nil {
                told.events.append((id, Self.disconnected(link.peripheral, link.address, reason: reason)))
            } else {
                continue
            }
            registrations[id] = registration
            told.registrations[id] = registration
        }
        return told
    }

    /// `connected` is every link up now (start-up, bluetoothd back): a told
    /// link not among them ended unseen and is told `peer-disconnected`
    /// with `reason`; a matching one not told is told `peer-connected`.
    public mutating func reconcile(connected: [PeerLink], reason: ConnectionFailure) -> Told {
        var told = Told()
        let up = Dictionary(connected.filter(\.connected).map { ($0.peripheral, $0) }, uniquingKeysWith: { first, _ in first })
        for id in registrations.keys.sorted() {
            guard var registration = registrations[id] else { continue }
            let before = registration
            for peripheral in registration.told.sorted() where up[peripheral] == nil {
                registration.told.remove(peripheral)
                told.events.append((id, Self.disconnected(peripheral, addresses[peripheral], reason: reason)))
            }
            for link in up.values.sorted(by: { $0.peripheral < $1.peripheral })
            where registration.matches(link.peripheral, offering: link.services) && registration.told.insert(link.peripheral).inserted {
                told.events.append((id, Self.connected(link)))
            }
            for peripheral in registration.told { if let link = up[peripheral] { addresses[peripheral] = link.address } }
            guard registration != before else { continue }
            registrations[id] = registration
            told.registrations[id] = registration
        }
        return told
    }

    /// Every told link is gone at once (bluetoothd left the bus): each is
    /// told `peer-disconnected` with `reason`.
    public mutating func allGone(reason: ConnectionFailure) -> Told {
        reconcile(connected: [], reason: reason)
    }

    static func connected(_ link: PeerLink) -> RelinkEvent {
        .connectionEvent(peripheral: link.peripheral, address: link.address, connected: true, reason: nil)
    }

    static func disconnected(_ peripheral: PeripheralID, _ address: BluetoothAddress?, reason: ConnectionFailure?) -> RelinkEvent {
        .connectionEvent(peripheral: peripheral, address: address, connected: false, reason: reason)
    }
}
