import Foundation
import GRDB
@testable import RelinkStore
import Testing

/// The start-up load decodes rows straight from SQLite's columns, on two
/// readers while a third checks the file: it must be as strict as before
/// (a row the schema should have refused is `corruptRow`, never a crash or
/// a silently wrong record), and the state it preloads must be what a
/// fresh read returns.
@Suite("Start-up load: strict raw decoding, preload")
struct LoadDecodingTests {
    /// A store with one identifier holding a connection intent and a subscription on one peripheral, closed.
    private func populated(_ directory: TemporaryDirectory) async throws -> (RestoreIdentifier, PeripheralRecord) {
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        let id = try Fixtures.id("lock")
        let peripheral = try Fixtures.peripheral(1)
        try await store.apply([
            .putIdentifier(try Fixtures.identifier("lock")), .putPeripheral(peripheral),
            .putScanIntent(ScanIntent(identifier: id, serviceUUIDs: [try BluetoothUUID("180d")], allowDuplicates: false, updatedAt: Date())),
            .putConnectionIntent(try ConnectionIntent(identifier: id, peripheral: peripheral.id, requestedAt: Date())),
            .addSubscription(Subscription(identifier: id, peripheral: peripheral.id, service: try BluetoothUUID("180d"),
                                          characteristic: try BluetoothUUID("2a37"), createdAt: Date())),
        ])
        try store.close()
        return (id, peripheral)
    }

    /// Breaks one value behind the schema's back (CHECKs and foreign keys off).
    private func tamper(_ directory: TemporaryDirectory, _ sql: String) throws {
        var config = Configuration()
        config.foreignKeysEnabled = false
        let queue = try DatabaseQueue(path: directory.path + "/" + RelinkStore.databaseFileName, configuration: config)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: sql)
        }
        try queue.close()
    }

    @Test("a bad value in each table is corruptRow", arguments: [
        ("UPDATE connection_intent SET peripheral_id = x'0102'", "connection_intent.peripheral_id"),
        ("UPDATE connection_intent SET state = 'flying'", "connection_intent.state"),
        ("UPDATE connection_intent SET strategies = 'knownIdentifier,teleport'", "connection_intent.strategies"),
        ("UPDATE subscription SET identifier = 'bad id!'", "restore identifier"),
        ("UPDATE subscription SET characteristic_uuid = x'00'", "subscription.characteristic_uuid"),
        ("UPDATE peripheral SET address_type = 'sideways'", "peripheral address"),
        ("UPDATE peripheral SET service_uuids = x'0001020304'", "peripheral"),
        ("UPDATE scan_intent SET service_uuids = x'0011'", "scan_intent.service_uuids"),
        ("UPDATE restore_identifier SET name_preference = 'loudest'", "restore_identifier"),
        ("UPDATE restore_identifier SET owner_uid = -1", "owner_uid"),
    ])
    func badValues(sql: String, column: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await populated(directory)
        try tamper(directory, sql)
        let store = try RelinkStore(directory: directory.path, policy: .refuse, logger: LogCapture().logger)
        defer { try? store.close() }
        do {
            _ = try await store.loadState()
            Issue.record("loaded despite \(sql)")
        } catch {
            guard case .corruptRow(let what) = error else { Issue.record("\(error)"); return }
            #expect(what.contains(column), "\(what)")
        }
    }

    @Test("the preloaded state equals a fresh read, and a write makes the next load read again")
    func preload() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (id, peripheral) = try await populated(directory)
        let store = try RelinkStore(directory: directory.path, policy: .refuse, logger: LogCapture().logger)
        defer { try? store.close() }
        let first = try await store.loadState()
        #expect(first.identifiers.map(\.record.id) == [id])
        #expect(first.identifiers.first?.connections.map(\.peripheral) == [peripheral.id])
        #expect(first.identifiers.first?.subscriptions.count == 1)
        #expect(first.peripherals == [peripheral])
        #expect(try await store.loadState() == first, "a second load reads the file: same state")
        try await store.apply([.removeSubscription(try #require(first.identifiers.first?.subscriptions.first))])
        #expect(try await store.loadState().identifiers.first?.subscriptions == [])
    }
}
