/// Why a database file cannot be used: proven damage or a newer schema.
/// (A file relinkd may not read, or that another program holds locked, is
/// no bad state: see `FileUnavailableCause`.)
public enum BadStateReason: Hashable, Sendable, CustomStringConvertible {
    /// Not a database, or damaged (SQLite message, or `quick_check` output).
    case corrupt(String)
    /// Written by a newer relink: unknown migrations or a higher `user_version`.
    case newerSchema(userVersion: Int, unknownMigrations: [String])

    /// A short word for file names and log fields.
    public var tag: String {
        switch self {
        case .corrupt: "corrupt"
        case .newerSchema: "newer-schema"
        }
    }

    public var description: String {
        switch self {
        case .corrupt(let why): "corrupt database (\(why))"
        case .newerSchema(let version, let unknown):
            "database from a newer relink (user_version \(version), unknown migrations: \(unknown.joined(separator: ", ")))"
        }
    }
}
