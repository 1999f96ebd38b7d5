/// Migration "v5": the advertising-data prefixes of an identifier's scan
/// and of a connection intent's match rule (issue 22 item 3), each a list
/// of `AdvertisingDataPrefix` text forms separated by spaces, empty for
/// none (every row stored before). NEVER change this text once shipped;
/// add a new migration instead (and update `State/schema.sql`).
enum MigrationV5 {
    static let identifier = "v5"
    static let userVersion = 5

    static let sql = """
        ALTER TABLE scan_intent ADD COLUMN data_prefixes TEXT NOT NULL DEFAULT '';
        ALTER TABLE connection_intent ADD COLUMN match_data_prefixes TEXT NOT NULL DEFAULT '';
        PRAGMA user_version = 5;
        """
}
