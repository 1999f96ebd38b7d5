/// Migration "v6": each identifier's peripheral role
/// (`RelinkModel.PeripheralManagerRecord` in its JSON form: published
/// services, advertisement, cached values, subscribed centrals), which
/// relinkd registers with bluetoothd again by itself after any restart.
/// NEVER change this text once shipped; add a new migration instead (and
/// update `State/schema.sql`). (Issue 23.)
enum MigrationV6 {
    static let identifier = "v6"
    static let userVersion = 6

    static let sql = """
        CREATE TABLE peripheral_manager (
            identifier TEXT NOT NULL PRIMARY KEY REFERENCES restore_identifier(id) ON DELETE CASCADE,
            state TEXT NOT NULL CHECK (json_valid(state)),
            updated_at INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        PRAGMA user_version = 6;
        """
}
