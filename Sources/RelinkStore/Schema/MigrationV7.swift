/// Migration "v7": durable transfers (`Central1.StartTransfer`), each an
/// identifier's write of many chunks to one characteristic. The bytes live
/// in `transfer_data`, apart from the small `transfer` row whose
/// `confirmed` offset moves with every confirmed chunk: an update rewrites
/// that row only, never the bytes. NEVER change this text once shipped; add
/// a new migration instead (and update `State/schema.sql`). (Issue 22 item 6.)
enum MigrationV7 {
    static let identifier = "v7"
    static let userVersion = 7

    static let sql = """
        CREATE TABLE transfer (
            id BLOB NOT NULL PRIMARY KEY CHECK (length(id) = 16),
            identifier TEXT NOT NULL REFERENCES restore_identifier(id) ON DELETE CASCADE,
            peripheral_id BLOB NOT NULL REFERENCES peripheral(id) ON DELETE CASCADE,
            service_uuid BLOB NOT NULL CHECK (length(service_uuid) = 16),
            characteristic_uuid BLOB NOT NULL CHECK (length(characteristic_uuid) = 16),
            length INTEGER NOT NULL CHECK (length >= 1),
            confirmed INTEGER NOT NULL CHECK (confirmed >= 0 AND confirmed <= length),
            with_response INTEGER NOT NULL CHECK (with_response IN (0, 1)),
            resume INTEGER NOT NULL CHECK (resume IN (0, 1)),
            chunk_size INTEGER CHECK (chunk_size BETWEEN 1 AND 512),
            created_at INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE transfer_data (
            transfer_id BLOB NOT NULL PRIMARY KEY REFERENCES transfer(id) ON DELETE CASCADE,
            data BLOB NOT NULL
        ) STRICT;
        PRAGMA user_version = 7;
        """
}
