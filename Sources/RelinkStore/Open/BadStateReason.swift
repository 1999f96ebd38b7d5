/// Why a database file cannot be used: proven damage, the only reason a
/// database is ever moved aside. (A file relinkd may not read, or that
/// another program holds locked, is no bad state: see
/// `FileUnavailableCause`; nor is a newer schema: see
/// `StoreOpenError.newerSchema`.)
public enum BadStateReason: Hashable, Sendable, CustomStringConvertible {
    /// Not a database, or damaged (SQLite message, or `quick_check` output).
    case corrupt(String)
    /// The database file exists and is empty (0 bytes). relinkd makes a
    /// new database whole under another name and renames it into place
    /// (`StoreOpener.createIfMissing`), and SQLite never shrinks it to
    /// nothing again: an empty file was truncated outside relinkd (whatever
    /// it held is gone), or left by a relink older than that rule stopped
    /// within its very first open. Taking it as a new database would hide
    /// the first.
    case empty

    /// A short word for file names and log fields.
    public var tag: String {
        switch self {
        case .corrupt: "corrupt"
        case .empty: "empty"
        }
    }

    public var description: String {
        switch self {
        case .corrupt(let why): "corrupt database (\(why))"
        case .empty: "empty database file (0 bytes: truncated outside relinkd)"
        }
    }
}
