/// Migration "v7": each identifier's peripheral role
/// (`RelinkModel.PeripheralManagerRecord` in its JSON form: published
/// services, advertisement, cached values, subscribed centrals), which
/// relinkd registers with bluetoothd again by itself after any restart.
/// NEVER change this text once shipped; add a new migration instead (and
/// update `State/schema.sql`). (Issue 23's number; v5 and v6 are reserved
/// for issue 22's branches: at a merge only the number and the file name
/// would change.)
enum MigrationV7 {
    static let identifier = "v7"
    static let userVersion = 7

    static let sql = """
        CREATE TABLE peripheral_manager (
            identifier TEXT NOT NULL PRIMARY KEY REFERENCES restore_identifier(id) ON DELETE CASCADE,
            state TEXT NOT NULL CHECK (json_valid(state)),
            updated_at INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        PRAGMA user_version = 7;
        """
}
