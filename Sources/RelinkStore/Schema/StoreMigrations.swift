import GRDB

/// The store's migrations, in order. Shipped migrations never change.
enum StoreMigrations {
    /// The highest `PRAGMA user_version` this build writes.
    static let latestUserVersion = MigrationV13.userVersion

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(MigrationV1.identifier) { db in
            try db.execute(sql: MigrationV1.sql)
        }
        migrator.registerMigration(MigrationV2.identifier) { db in
            try db.execute(sql: MigrationV2.sql)
        }
        migrator.registerMigration(MigrationV3.identifier) { db in
            try db.execute(sql: MigrationV3.sql)
        }
        migrator.registerMigration(MigrationV4.identifier) { db in
            try db.execute(sql: MigrationV4.sql)
        }
        migrator.registerMigration(MigrationV5.identifier) { db in
            try db.execute(sql: MigrationV5.sql)
        }
        migrator.registerMigration(MigrationV6.identifier) { db in
            try db.execute(sql: MigrationV6.sql)
        }
        migrator.registerMigration(MigrationV7.identifier) { db in
            try db.execute(sql: MigrationV7.sql)
        }
        migrator.registerMigration(MigrationV8.identifier) { db in
            try db.execute(sql: MigrationV8.sql)
        }
        migrator.registerMigration(MigrationV9.identifier) { db in
            try db.execute(sql: MigrationV9.sql)
        }
        migrator.registerMigration(MigrationV10.identifier) { db in
            try db.execute(sql: MigrationV10.sql)
        }
        migrator.registerMigration(MigrationV11.identifier) { db in
            try db.execute(sql: MigrationV11.sql)
        }
        migrator.registerMigration(MigrationV12.identifier) { db in
            try db.execute(sql: MigrationV12.sql)
        }
        migrator.registerMigration(MigrationV13.identifier) { db in
            try db.execute(sql: MigrationV13.sql)
        }
        return migrator
    }
}
