/// Migration "v8": each identifier's launch spec (`RelinkModel.LaunchSpec`:
/// the D-Bus activatable name relinkd asks the bus to start when an event
/// for the identifier is committed while no client of it is attached, and
/// the event kinds that wake it; docs/relaunch.md). NEVER change this text
/// once shipped; add a new migration instead (and update `State/schema.sql`).
/// (Issue 25.)
enum MigrationV8 {
    static let identifier = "v8"
    static let userVersion = 8

    static let sql = """
        CREATE TABLE launch_spec (
            identifier TEXT NOT NULL PRIMARY KEY REFERENCES restore_identifier(id) ON DELETE CASCADE,
            bus_name TEXT NOT NULL CHECK (length(bus_name) BETWEEN 3 AND 255),
            wake_on TEXT NOT NULL CHECK (json_valid(wake_on) AND json_type(wake_on) = 'array'),
            updated_at INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        PRAGMA user_version = 8;
        """
}
