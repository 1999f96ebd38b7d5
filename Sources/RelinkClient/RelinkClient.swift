/// # RelinkClient: a CoreBluetooth-like client of relinkd
///
/// * ``RelinkCentral``: one restore identifier. `connect()` registers it
///   and returns its ``RelinkRestoredState`` (CoreBluetooth's
///   `willRestoreState`) before any event; ``RelinkCentral/events`` then
///   yields ``RelinkClientEvent``s in sequence order; acknowledge what was
///   processed with ``RelinkCentral/acknowledge(through:)``.
/// * ``RelinkManager``: every call of relinkd's D-Bus API, typed, for
///   one-shot tools (`relinkctl`).
/// * ``RelinkClientError``: the `org.relink.Error.*` name and message.
/// * ``RelinkArguments``, ``RelinkPaths``: the argument rules and object
///   paths of the API.
public enum RelinkClientModule {}
