/// Migration "v12": the I/O capability relinkd's agent is registered with
/// when it pairs for a connection intent (`Pair`, pairing on demand;
/// `Connect`'s `pairing_capability` option, BlueZ's five names). Existing
/// intents keep Just Works (`NoInputNoOutput`), what they paired with
/// before. NEVER change this text once shipped; add a new migration instead
/// (and update `State/schema.sql`). (Issue 24.)
enum MigrationV12 {
    static let identifier = "v12"
    static let userVersion = 12

    static let sql = """
        ALTER TABLE connection_intent ADD COLUMN pairing_capability TEXT NOT NULL DEFAULT 'NoInputNoOutput' CHECK (pairing_capability IN
            ('DisplayOnly', 'DisplayYesNo', 'KeyboardOnly', 'KeyboardDisplay', 'NoInputNoOutput'));
        PRAGMA user_version = 12;
        """
}
