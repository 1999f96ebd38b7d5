/// Migration "v10": the starts relinkd made of each relaunched program
/// (docs/relaunch.md#bounds), so that the bound "at most 5 starts in any
/// 30 s" holds across a relinkd restart: a program that crashes at start,
/// with relinkd restarted meanwhile, is not started afresh. One row per
/// start, written before the bus is asked; rows older than the window are
/// deleted as new ones come. NEVER change this text once shipped; add a new
/// migration instead (and update `State/schema.sql`). (Issue 25.)
enum MigrationV10 {
    static let identifier = "v10"
    static let userVersion = 10

    static let sql = """
        CREATE TABLE launch_start (
            target TEXT NOT NULL CHECK (length(target) BETWEEN 3 AND 255),
            started_at INTEGER NOT NULL,
            PRIMARY KEY (target, started_at)
        ) STRICT, WITHOUT ROWID;
        PRAGMA user_version = 10;
        """
}
