/// What `RelinkStore.open` does with a database proven bad (`BadStateReason`:
/// corrupt or empty). In no case is the file deleted or overwritten; a
/// database from a newer schema, or a file relinkd may not read or that is
/// locked, stops start-up under either policy (`StoreOpenError`).
public enum StoreOpenPolicy: String, Hashable, Sendable, CaseIterable {
    /// Leave the files where they are, log at critical, and throw
    /// `StoreOpenError.badState` (relinkd exits with `StoreOpenError.exitStatus`, 65).
    /// Every later start fails the same way until an operator acts.
    case refuse
    /// Move the files into `quarantine/` with a timestamp, log at critical,
    /// and start with an empty store; `RelinkStore.quarantined` says what was
    /// moved where, for the daemon's status (`quarantined` in `Manager1.Status`).
    case quarantineAndStartEmpty
}
