/// Migration "v9": the starts relinkd made of each relaunched program
/// (docs/relaunch.md#bounds), so that the bound "at most 5 starts in any
/// 30 s" holds across a relinkd restart: a program that crashes at start,
/// with relinkd restarted meanwhile, is not started afresh. One row per
/// start, written before the bus is asked; rows older than the window are
/// deleted as new ones come. NEVER change this text once shipped; add a new
/// migration instead (and update `State/schema.sql`). Also the launch
/// spec's systemd unit (`LaunchSpec.systemdUnit`). (Issue 25.)
enum MigrationV9 {
    static let identifier = "v9"
    static let userVersion = 9

    static let sql = """
        CREATE TABLE launch_start (
            target TEXT NOT NULL CHECK (length(target) BETWEEN 3 AND 255),
            started_at INTEGER NOT NULL,
            PRIMARY KEY (target, started_at)
        ) STRICT, WITHOUT ROWID;
        ALTER TABLE launch_spec ADD COLUMN systemd_unit TEXT CHECK (systemd_unit IS NULL OR length(systemd_unit) BETWEEN 9 AND 255);
        PRAGMA user_version = 9;
        """
}
