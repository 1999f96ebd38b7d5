/// Migration "v10": whether a connection intent may pair on demand (a read,
/// write or subscription refused for insufficient authentication or
/// encryption makes relinkd pair, then try once more; the `pair_on_demand`
/// option of `Connect`, default on as in CoreBluetooth). Existing intents
/// keep the default. NEVER change this text once shipped; add a new
/// migration instead (and update `State/schema.sql`). (Issue 24.)
enum MigrationV10 {
    static let identifier = "v10"
    static let userVersion = 10

    static let sql = """
        ALTER TABLE connection_intent ADD COLUMN pair_on_demand INTEGER NOT NULL DEFAULT 1 CHECK (pair_on_demand IN (0, 1));
        PRAGMA user_version = 10;
        """
}
