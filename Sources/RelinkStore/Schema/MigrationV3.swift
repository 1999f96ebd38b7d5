/// Migration "v3": the adapter status relinkd last announced to programs
/// (`adapter-state` events), per adapter, so that a restart announces it
/// only when it changed meanwhile. NEVER change this text once shipped;
/// add a new migration instead (and update `State/schema.sql`).
enum MigrationV3 {
    static let identifier = "v3"
    static let userVersion = 3

    static let sql = """
        CREATE TABLE adapter_state (
            adapter TEXT NOT NULL PRIMARY KEY CHECK (length(adapter) BETWEEN 1 AND 32),
            state TEXT NOT NULL CHECK (state IN ('poweredOn', 'poweredOff', 'blocked', 'missing', 'bluetoothdMissing', 'notPermitted')),
            roles TEXT NOT NULL,
            announced_at INTEGER NOT NULL
        ) STRICT;
        PRAGMA user_version = 3;
        """
}
