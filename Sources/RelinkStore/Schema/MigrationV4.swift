/// Migration "v4": the last GATT database relinkd read per peripheral
/// (`RelinkModel.GattDatabase` in its JSON form), handed back in
/// `Register`'s restored state and compared for `services-changed`. NEVER
/// change this text once shipped; add a new migration instead (and update
/// `State/schema.sql`). (Issue 22 reserves v4 for it; at a merge only the
/// number and the file name would change.)
enum MigrationV4 {
    static let identifier = "v4"
    static let userVersion = 4

    static let sql = """
        CREATE TABLE gatt_database (
            peripheral_id BLOB NOT NULL PRIMARY KEY REFERENCES peripheral(id) ON DELETE CASCADE,
            layout TEXT NOT NULL CHECK (json_valid(layout)),
            read_at INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        PRAGMA user_version = 4;
        """
}
