import DaemonCore
import Foundation
import RelinkModel
import Restoration
import Testing

/// When a peripheral's GATT database is read and what a new one means
/// (DaemonCore+GattDatabase.swift), as a table.
@Suite struct GattDatabaseCoreTests {
    typealias Core = DaemonCore<ManualClock>

    static func database(_ uuids: [String]) throws -> GattDatabase {
        GattDatabase(services: try uuids.map { GattDatabase.Service(uuid: try BluetoothUUID(parsing: $0)) }, readAt: Date())
    }

    /// Not wanted: nothing read. Wanted: read after the objects are still
    /// (a later move makes the earlier timer stale); an empty database is
    /// not kept; the first one and one of the same layout are stored; a new
    /// layout is stored with `services-changed` to every interested
    /// identifier; one stored before the start counts as read before.
    @Test func aDatabaseIsReadWhenStillAndANewLayoutIsToldToEveryInterestedIdentifier() throws {
        let lock = DaemonCoreTests.lock
        var core = try DaemonCoreTests.core([ConnectionIntentID(identifier: try DaemonCoreTests.identifier("b.lock"), peripheral: lock)])
        _ = core.planner.subscribe(Subscription(identifier: try DaemonCoreTests.identifier("a.watcher"), peripheral: lock,
                                                characteristic: CharacteristicKey(service: try BluetoothUUID(parsing: "fff0"),
                                                                                  characteristic: try BluetoothUUID(parsing: "fff1"))))
        let table: [(Core.Input, [String])] = [
            (.gattObjectsMoved(PeripheralID()), []),
            (.gattObjectsMoved(lock), ["settle 1"]),
            (.gattObjectsMoved(lock), ["settle 2"]),
            (.gattSettled(lock, generation: 1), []),
            (.gattSettled(lock, generation: 2), ["read database"]),
            (.gattSettled(lock, generation: 2), []),
            (.gattDatabaseRead(lock, try Self.database([])), []),
            (.gattDatabaseRead(lock, try Self.database(["180f"])), ["store 1 services"]),
            (.gattDatabaseRead(lock, try Self.database(["180f"])), ["store 1 services"]),
            (.gattDatabaseRead(lock, try Self.database(["180f", "fff0"])), [#"services changed 2 to ["a.watcher", "b.lock"]"#]),
        ]
        for (input, expected) in table { #expect(DaemonCoreTests.names(core.handle(input)) == expected, "\(input)") }
        #expect(core.gattDatabases[lock]?.services.count == 2)

        var restarted = try DaemonCoreTests.core([ConnectionIntentID(identifier: try DaemonCoreTests.identifier("b.lock"), peripheral: lock)])
        _ = restarted.handle(.gattDatabasesLoaded([lock: try Self.database(["180f"])]))
        #expect(DaemonCoreTests.names(restarted.handle(.gattDatabaseRead(lock, try Self.database(["fff0"]))))
                == [#"services changed 1 to ["b.lock"]"#], "a database stored before the start counts")
    }
}
