/// Migration "v2": a connection intent's match rule, how a scan recognises
/// a peripheral whose address changed (advertisement criteria, each
/// optional). NEVER change this text once shipped; add a new migration
/// instead (and update `State/schema.sql`).
enum MigrationV2 {
    static let identifier = "v2"
    static let userVersion = 2

    static let sql = """
        ALTER TABLE connection_intent ADD COLUMN match_name TEXT CHECK (length(CAST(match_name AS BLOB)) BETWEEN 1 AND 248);
        ALTER TABLE connection_intent ADD COLUMN match_manufacturer_id INTEGER CHECK (match_manufacturer_id BETWEEN 0 AND 65535);
        ALTER TABLE connection_intent ADD COLUMN match_services BLOB NOT NULL DEFAULT x'' CHECK (length(match_services) % 16 = 0);
        PRAGMA user_version = 2;
        """
}
