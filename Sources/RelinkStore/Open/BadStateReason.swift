/// Why a database file cannot be used: proven damage, the only reason a
/// database is ever moved aside. (A file relinkd may not read, or that
/// another program holds locked, is no bad state: see
/// `FileUnavailableCause`; nor is a newer schema: see
/// `StoreOpenError.newerSchema`.)
public enum BadStateReason: Hashable, Sendable, CustomStringConvertible {
    /// Not a database, or damaged (SQLite message, or `quick_check` output).
    case corrupt(String)

    /// A short word for file names and log fields.
    public var tag: String {
        switch self {
        case .corrupt: "corrupt"
        }
    }

    public var description: String {
        switch self {
        case .corrupt(let why): "corrupt database (\(why))"
        }
    }
}
