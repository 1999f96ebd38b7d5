#if canImport(Glibc)
import Glibc
#endif

/// Why `RelinkStore.open` failed. Each case maps to an exit status for
/// relinkd, and its description names the path, the cause and the fix.
/// In no case was a file deleted, overwritten or moved.
public enum StoreOpenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The database is unusable and the policy was `.refuse`: the file is untouched at `path`.
    case badState(BadStateReason, path: String)
    /// The database at `path` was written by a newer relink: its
    /// `user_version` (`found`) is above `supported`, the newest this build
    /// knows, or it lists migrations this build does not know. It is never
    /// moved aside or migrated (a downgrade must not lose the state).
    case newerSchema(path: String, found: Int, supported: Int, unknownMigrations: [String])
    /// A file of the store (the database, its `-wal` or `-shm`) exists but
    /// cannot be used as it is (permissions, not a file, locked by another
    /// program); nothing shows it is damaged, so it stays where it is.
    case fileUnavailable(path: String, cause: FileUnavailableCause)
    /// Another process (`holder`, the PID it wrote into `relink.lock`, when
    /// readable) holds the state directory at `path`: another relinkd.
    case stateDirectoryInUse(path: String, holder: Int32?)
    /// The state directory cannot be created, read or written (`path`, and why).
    /// Nothing was moved: there is nowhere to move to.
    case stateDirectoryUnusable(path: String, reason: String)
    /// Moving a bad database aside failed; it is still at `path`.
    case quarantineFailed(BadStateReason, path: String, error: String)
    /// The disk is full or read-only, or another I/O failure happened while
    /// opening or migrating the database at `path`; nothing was changed.
    case storage(StoreError, path: String)

    /// The process exit status relinkd uses for this error (sysexits.h):
    /// 65 (EX_DATAERR) bad state refused or could not be moved aside, or a
    /// newer schema; 66 (EX_NOINPUT) a store file that cannot be opened;
    /// 73 (EX_CANTCREAT) state directory unusable; 74 (EX_IOERR) storage
    /// failure; 75 (EX_TEMPFAIL) the state directory is in use by another
    /// relinkd, or the database is locked by another program; 77
    /// (EX_NOPERM) a store file relinkd may not read and write.
    public var exitStatus: Int32 {
        switch self {
        case .badState, .quarantineFailed, .newerSchema: 65
        case .fileUnavailable(_, let cause): cause.exitStatus
        case .stateDirectoryUnusable: 73
        case .storage: 74
        case .stateDirectoryInUse: 75
        }
    }

    /// The file or directory concerned.
    public var path: String {
        switch self {
        case .badState(_, let path), .newerSchema(let path, _, _, _), .fileUnavailable(let path, _),
             .stateDirectoryUnusable(let path, _), .stateDirectoryInUse(let path, _), .quarantineFailed(_, let path, _),
             .storage(_, let path):
            path
        }
    }

    /// What an operator does so that the next start succeeds.
    public var fix: String {
        switch self {
        case .badState:
            "move \(path) (with its -wal and -shm) away to start with an empty store, or restore a good copy; "
                + "see State/README.md, \"Bad state\""
        case .newerSchema:
            "run the newer relink again (relinkd never migrates a database down), or move \(path) "
                + "(with its -wal and -shm) away to start this relinkd with an empty store"
        case .fileUnavailable(let path, let cause):
            cause.fix(path: path, uid: getuid())
        case .stateDirectoryInUse(_, let holder):
            "stop the other relinkd (\(Self.naming(holder)); `systemctl stop relinkd` if it is the service), "
                + "or give this one another --state-directory"
        case .stateDirectoryUnusable:
            "create \(path) as a directory the user relinkd runs as (uid \(getuid())) may read, write and enter "
                + "(mode 0700), or pass another --state-directory"
        case .quarantineFailed:
            "make \(path)'s directory and its quarantine/ writable for uid \(getuid()), or move the file away by hand"
        case .storage:
            "free space on, or remount read-write, the file system of \(path), and check the kernel log for I/O errors"
        }
    }

    /// What went wrong, with the path (the description without the fix).
    public var problem: String {
        switch self {
        case .badState(let reason, let path): "\(reason) at \(path); left in place (policy refuse)"
        case .newerSchema(let path, let found, let supported, let unknown):
            "\(path) has schema version \(found) and this relinkd knows up to \(supported): written by a newer relink"
                + (unknown.isEmpty ? "" : " (migrations this relinkd does not know: \(unknown.joined(separator: ", ")))")
                + "; left in place"
        case .fileUnavailable(let path, let cause): "\(path) \(cause); left in place"
        case .stateDirectoryUnusable(let path, let reason): "state directory \(path) unusable: \(reason)"
        case .stateDirectoryInUse(let path, let holder):
            "state directory \(path) is in use by another relinkd (\(Self.naming(holder))): two on one store would destroy each other's state"
        case .quarantineFailed(let reason, let path, let error): "\(reason) at \(path); moving it aside failed: \(error)"
        case .storage(let error, let path): "opening the store at \(path) failed: \(error)"
        }
    }

    public var description: String { "\(problem). Fix: \(fix)" }

    private static func naming(_ holder: Int32?) -> String { holder.map { "PID \($0)" } ?? "PID unknown" }
}
