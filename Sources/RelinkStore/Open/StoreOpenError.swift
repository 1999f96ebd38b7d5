/// Why `RelinkStore.open` failed. Each case maps to an exit status for relinkd.
public enum StoreOpenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The database is unusable and the policy was `.refuse`: the file is untouched at `path`.
    case badState(BadStateReason, path: String)
    /// The state directory cannot be created, read or written (`path`, and why).
    /// Nothing was moved: there is nowhere to move to.
    case stateDirectoryUnusable(path: String, reason: String)
    /// Moving a bad database aside failed; it is still at `path`.
    case quarantineFailed(BadStateReason, path: String, error: String)
    /// The disk is full or read-only, or another I/O failure happened while
    /// opening or migrating; nothing was changed.
    case storage(StoreError)

    /// The process exit status relinkd uses for this error (sysexits.h):
    /// 65 (EX_DATAERR) bad state refused or could not be moved aside,
    /// 73 (EX_CANTCREAT) state directory unusable, 74 (EX_IOERR) storage failure.
    public var exitStatus: Int32 {
        switch self {
        case .badState, .quarantineFailed: 65
        case .stateDirectoryUnusable: 73
        case .storage: 74
        }
    }

    public var description: String {
        switch self {
        case .badState(let reason, let path): "\(reason) at \(path); left in place (policy refuse)"
        case .stateDirectoryUnusable(let path, let reason): "state directory \(path) unusable: \(reason)"
        case .quarantineFailed(let reason, let path, let error): "\(reason) at \(path); moving it aside failed: \(error)"
        case .storage(let error): "opening the store failed: \(error)"
        }
    }
}
