/// What `RelinkStore.open` does with a database it cannot use (corrupt, from
/// a newer schema, or unreadable). In no case is the file deleted or overwritten.
public enum StoreOpenPolicy: String, Hashable, Sendable, CaseIterable {
    /// Leave the files where they are, log at critical, and throw
    /// `StoreOpenError.badState` (relinkd exits with `StoreOpenError.exitStatus`, 65).
    /// Every later start fails the same way until an operator acts.
    case refuse
    /// Move the files into `quarantine/` with a timestamp, log at critical,
    /// and start with an empty store; `RelinkStore.quarantined` says what was
    /// moved where, for the daemon's status.
    case quarantineAndStartEmpty
}
