/// When a connection intent gives up.
public enum ConnectionDeadline: Sendable, Hashable, Codable {
    /// Never: the intent stays pending until its client cancels it, like a
    /// CoreBluetooth `connect` (the default, right for locks). Between rounds
    /// the machine holds the link by BlueZ background auto-connect where a
    /// known device exists, and by a low-duty scan otherwise.
    case pendingUntilCancelled
    /// Give up (a `failedToConnect` event with class `timeout`) when the link
    /// is not up this long after the intent starts, or after a disconnect.
    case after(Duration)
}
