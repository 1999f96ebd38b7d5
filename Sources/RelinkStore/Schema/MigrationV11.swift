/// Migration "v11": per connection intent, whether its peripheral is bonded
/// (bluetoothd paired it and keeps the keys) and whether the stored address
/// is the identity address bluetoothd resolved the peripheral's resolvable
/// private address to when it paired (a peripheral that rotates its
/// address is then found again through it). Existing intents: neither.
/// NEVER change this text once shipped; add a new migration instead (and
/// update `State/schema.sql`). (Issue 24.)
enum MigrationV11 {
    static let identifier = "v11"
    static let userVersion = 11

    static let sql = """
        ALTER TABLE connection_intent ADD COLUMN bonded INTEGER NOT NULL DEFAULT 0 CHECK (bonded IN (0, 1));
        ALTER TABLE connection_intent ADD COLUMN identity_address INTEGER NOT NULL DEFAULT 0 CHECK (identity_address IN (0, 1));
        PRAGMA user_version = 11;
        """
}
