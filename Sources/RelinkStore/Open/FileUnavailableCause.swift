/// Why a file of the store cannot be used although nothing shows that it is
/// damaged. Such a file is never moved aside: start-up stops, naming it,
/// and the next start succeeds once the cause is fixed.
public enum FileUnavailableCause: Hashable, Sendable, CustomStringConvertible {
    /// This process may not read and write the file (`EACCES`, `EPERM`; the
    /// system's message).
    case permissionDenied(String)
    /// Something other than a regular file (a directory, a socket, ...) is at the path.
    case notARegularFile
    /// Another program holds a lock on the database (SQLite's `SQLITE_BUSY`
    /// or `SQLITE_LOCKED`) for longer than the store waits.
    case busy(String)
    /// SQLite cannot open the file for another reason (`SQLITE_CANTOPEN`,
    /// `SQLITE_PERM`; SQLite's message).
    case cannotOpen(String)

    /// The exit status relinkd uses (sysexits.h): 77 (`EX_NOPERM`) for a
    /// permission problem, 75 (`EX_TEMPFAIL`) for a lock another program
    /// holds (it may end), 66 (`EX_NOINPUT`) otherwise.
    public var exitStatus: Int32 {
        switch self {
        case .permissionDenied: 77
        case .busy: 75
        case .notARegularFile, .cannotOpen: 66
        }
    }

    public var description: String {
        switch self {
        case .permissionDenied(let why): "cannot be read and written (\(why))"
        case .notARegularFile: "is not a regular file"
        case .busy(let why): "is locked by another program (\(why))"
        case .cannotOpen(let why): "cannot be opened (\(why))"
        }
    }

    /// What an operator does about it, for `path`, when relinkd runs as `uid`.
    func fix(path: String, uid: UInt32) -> String {
        switch self {
        case .permissionDenied:
            "give the user relinkd runs as (uid \(uid)) read and write access to \(path), for example "
                + "`chown \(uid) \(path) && chmod 600 \(path)`, then start relinkd again"
        case .notARegularFile:
            "move what is at \(path) away (relinkd then starts with an empty store) or put the database file back there, "
                + "then start relinkd again"
        case .busy:
            "stop the program that holds \(path) open (an sqlite3 shell, a backup), then start relinkd again"
        case .cannotOpen:
            "check that \(path) is a readable and writable SQLite file of uid \(uid) on a mounted file system, "
                + "then start relinkd again"
        }
    }
}
