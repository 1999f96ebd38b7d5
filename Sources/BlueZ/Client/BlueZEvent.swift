public import DBus
public import RelinkModel

/// What the BlueZ layer tells upper layers, in order.
public enum BlueZEvent: Sendable, Hashable {
    /// A change of the object tree.
    case mirror(MirrorEvent)
    /// The mirror was dropped and rebuilt: everything bluetoothd held for
    /// relink (discovery sessions, notify sessions, connections made by
    /// relink, registrations) must be assumed gone and redone by the upper
    /// layers. The layer itself has already re-registered its GATT profile
    /// application and re-applied discovery.
    case reset(ResetReason)
    /// bluetoothd left the bus; the mirror is empty until it comes back.
    case serviceLost
    /// An adapter's `Powered` changed. After `false`, bluetoothd has dropped
    /// discovery sessions and filters; after `true` the layer re-applied
    /// them.
    case adapterPowered(ObjectPath, Bool)
    /// The status of an adapter watched with ``BlueZPort/watchAdapter(_:)``
    /// changed (powered, blocked, removed, bluetoothd gone or refusing
    /// relinkd): emitted right after the event that changed it.
    case adapterStatus(ObjectPath, AdapterStatus)
}

/// Why the mirror was rebuilt.
public enum ResetReason: String, Sendable, Hashable {
    /// The first `GetManagedObjects` after start.
    case initial
    /// `org.bluez` got a new owner: bluetoothd restarted or crashed.
    case bluetoothdRestarted
    /// The bus refused relinkd's calls to bluetoothd (`AccessDenied`) and
    /// now lets them through (its policy was changed and reloaded).
    case accessGranted
    /// bluetoothd held `org.bluez` without answering relinkd's calls
    /// (hung) and now answers them.
    case bluetoothdAnswered
}
