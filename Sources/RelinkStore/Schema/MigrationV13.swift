/// Migration "v13": each identifier's connection-event registration
/// (`Central1.RegisterForConnectionEvents`): the services and peripherals it
/// matches, and the matching peripherals it was told connected (so that
/// each is told disconnected once, across restarts). Lists are 16-byte
/// UUIDs concatenated. NEVER change this text once shipped; add a new
/// migration instead (and update `State/schema.sql`). (Issue 35.)
enum MigrationV13 {
    static let identifier = "v13"
    static let userVersion = 13

    static let sql = """
        CREATE TABLE connection_event_registration (
            identifier TEXT NOT NULL PRIMARY KEY REFERENCES restore_identifier(id) ON DELETE CASCADE,
            service_uuids BLOB NOT NULL CHECK (length(service_uuids) % 16 = 0),
            peripheral_ids BLOB NOT NULL CHECK (length(peripheral_ids) % 16 = 0),
            told_connected BLOB NOT NULL CHECK (length(told_connected) % 16 = 0),
            updated_at INTEGER NOT NULL
        ) STRICT;
        PRAGMA user_version = 13;
        """
}
