public import DBus
public import RelinkModel

/// A snapshot of an `org.bluez.Adapter1` object.
public struct Adapter: Sendable, Hashable {
    public var path: ObjectPath
    public var address: String?
    public var name: String?
    public var alias: String?
    public var powered: Bool
    public var discovering: Bool
    public var uuids: [String]
    /// `PowerState` (BlueZ ≥ 5.64: `on`, `off`, `off-enabling`,
    /// `on-disabling`, `off-blocked`); nil on older ones.
    public var powerState: String?
    /// The LE roles it supports, from `Roles` (empty when BlueZ does not say).
    public var roles: [AdapterRole]

    init(path: ObjectPath, properties p: InterfaceProperties) {
        self.path = path
        address = p.string("Address")
        name = p.string("Name")
        alias = p.string("Alias")
        powered = p.bool("Powered") ?? false
        discovering = p.bool("Discovering") ?? false
        uuids = p.strings("UUIDs")
        powerState = p.string("PowerState")
        roles = AdapterRole.parsing(p.strings("Roles"))
    }

    /// Powered and not being powered off: bluetoothd sets `PowerState` to
    /// `on-disabling` before it asks the kernel to power the adapter off,
    /// and signals it before the links drop and `Powered` turns false.
    /// Nothing is asked of an adapter that is not on (docs/real-bluez.md, G10).
    public var isOn: Bool { powered && powerState != "on-disabling" }

    /// The adapter's properties that decide ``status``: a change of any
    /// other property leaves it as it was.
    static let statusProperties: Set<String> = ["Powered", "PowerState", "Roles"]

    /// What programs are told of this adapter (``AdapterState``): the state
    /// follows `Powered`, as relinkd's links do, except that an adapter
    /// bluetoothd is powering off (`PowerState` `on-disabling`, signalled
    /// before its links drop) is off already, so that no link it drops starts
    /// a reconnection the kernel would refuse on the way down
    /// (docs/real-bluez.md, G10); `PowerState` also tells a blocked adapter
    /// (rfkill) from one merely off.
    public var status: AdapterStatus {
        let state: AdapterState = isOn ? .poweredOn : powerState == "off-blocked" ? .blocked : .poweredOff
        return AdapterStatus(state, roles: roles)
    }
}

/// Whether relinkd can talk to bluetoothd.
public enum BluetoothdPresence: Sendable, Hashable {
    /// bluetoothd owns `org.bluez` and answered.
    case present
    /// Nobody owns `org.bluez` (or bluetoothd never answered).
    case absent
    /// The bus refuses relinkd's calls to `org.bluez` (`AccessDenied`).
    case refused
}

extension Mirror {
    /// What programs are told of the adapter at `path`, given whether
    /// bluetoothd is there: the one place that maps BlueZ's facts to an
    /// ``AdapterStatus``.
    public func adapterStatus(of path: ObjectPath, bluetoothd: BluetoothdPresence) -> AdapterStatus {
        switch bluetoothd {
        case .absent: return AdapterStatus(.bluetoothdMissing)
        case .refused: return AdapterStatus(.notPermitted)
        case .present: return adapter(path)?.status ?? AdapterStatus(.missing)
        }
    }
}

/// Follows the status of the adapters upper layers watch and says when
/// one changed, so that the change reaches them in order with the events
/// that caused it (``BlueZEvent/adapterStatus(_:_:)``). Shared by
/// ``BlueZClient`` and the in-memory fake.
public struct AdapterStatusReporter: Sendable {
    /// The last status reported per watched adapter.
    public private(set) var watched: [ObjectPath: AdapterStatus] = [:]

    /// A reporter watching nothing.
    public init() {}

    /// Starts watching `path`; returns its status now (later changes are
    /// reported by ``events(after:mirror:bluetoothd:)``).
    public mutating func watch(_ path: ObjectPath, mirror: Mirror, bluetoothd: BluetoothdPresence) -> AdapterStatus {
        let status = mirror.adapterStatus(of: path, bluetoothd: bluetoothd)
        watched[path] = status
        return status
    }

    /// An ``BlueZEvent/adapterStatus(_:_:)`` event for each watched
    /// adapter whose status `event` changed, to be emitted right after it.
    /// Only events that can change one are looked at (not a notified
    /// value): cheap on the hot path.
    public mutating func events(after event: BlueZEvent, mirror: Mirror, bluetoothd: BluetoothdPresence) -> [BlueZEvent] {
        guard !watched.isEmpty, Self.mayChangeStatus(event) else { return [] }
        var changed: [BlueZEvent] = []
        for (path, old) in watched.sorted(by: { $0.key < $1.key }) {
            let new = mirror.adapterStatus(of: path, bluetoothd: bluetoothd)
            guard new != old else { continue }
            watched[path] = new
            changed.append(.adapterStatus(path, new))
        }
        return changed
    }

    static func mayChangeStatus(_ event: BlueZEvent) -> Bool {
        switch event {
        case .reset, .serviceLost: true
        case .mirror(.adapterAdded), .mirror(.adapterRemoved): true
        case .mirror(.propertyChanged(_, BlueZInterface.adapter, let property, _, _)): Adapter.statusProperties.contains(property)
        default: false
        }
    }
}
