import DBus

/// Where relinkd is: the system bus (production) or an explicit address
/// (a private test bus).
public enum RelinkBus: Sendable, Hashable {
    /// `DBUS_SYSTEM_BUS_ADDRESS` when set, else the system bus socket.
    case system
    /// A D-Bus address such as `unix:path=/tmp/bus`.
    case address(String)

    /// The bus for an optional `--bus-address`.
    public init(address: String?) {
        if let address, !address.isEmpty { self = .address(address) } else { self = .system }
    }

    var dbus: Connection.Bus {
        switch self {
        case .system: .system
        case .address(let a): .address(a)
        }
    }
}
