import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// Issue 22 items 1 and 2 in-process: the GATT database as listed, stored,
/// restored and compared (`services-changed`), and descriptors located for
/// reads and writes, with every bad input's typed error.
@Suite("Daemon in-process: the GATT database and descriptors")
struct GattDatabaseTests {
    typealias T = RestoreCycleTests
    static let battery = BluetoothUUID(shortValue: 0x180F)
    static let level = BluetoothUUID(shortValue: 0x2A19)
    static let location = BluetoothUUID(shortValue: 0x2A38)
    static let vendor = BluetoothUUID(high: 0x8e7f_1aff_4b2c_4d1e, low: 0x9a3f_7265_6c69_6e6b)
    static let caller = APICaller(name: ":1.7", uid: 0)

    /// A band with a primary service that includes a secondary one, and a
    /// descriptor of each kind on its measurement.
    static func services(extra: Bool = false) -> [FakeService] {
        var heart = FakeService(uuid: T.heartRate, characteristics: [
            FakeCharacteristic(uuid: T.measurement, flags: ["notify"], descriptors: [
                FakeDescriptor(uuid: GattDatabase.userDescription, flags: ["read"], value: Array("Heart rate".utf8)),
                FakeDescriptor(uuid: GattDatabase.presentationFormat, flags: ["read"], value: [0x04, 0, 0xAD, 0x27, 0x01, 0, 0]),
                FakeDescriptor(uuid: vendor, flags: ["read", "write"], value: [0]),
            ]),
            FakeCharacteristic(uuid: location, flags: ["read", "write-without-response", "encrypt-read"], value: [2]),
        ], includes: [battery])
        if extra { heart.characteristics.append(FakeCharacteristic(uuid: BluetoothUUID(shortValue: 0x2A39), flags: ["write"])) }
        return [heart, FakeService(uuid: battery, characteristics: [FakeCharacteristic(uuid: level, flags: ["read"], value: [90])], primary: false)]
    }

    /// What a central must list for ``services(extra:)``.
    static func expected(extra: Bool = false) -> [GattDatabase.Service] {
        services(extra: extra).map { s in
            GattDatabase.Service(uuid: s.uuid, isPrimary: s.primary, includedServices: s.includes, characteristics: s.characteristics.map { c in
                GattDatabase.Characteristic(uuid: c.uuid, flags: c.flags, descriptors: c.descriptors.map { GattDatabase.Descriptor(uuid: $0.uuid, flags: $0.flags) })
            })
        }
    }

    static func band() -> FakePeripheral {
        FakePeripheral(address: T.band, advertisedName: "HRM-2C41", gapName: "Wrist Band", services: services())
    }

    static func linked(_ fake: FakeBlueZ, directory: String? = nil) async throws -> InProcessDaemon {
        await fake.add(band(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try directory ?? InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        return d
    }

    static func database(_ d: InProcessDaemon, _ id: RestoreIdentifier = T.id, from caller: APICaller = caller) async throws(RelinkError) -> GattDatabase {
        let values = try await d.daemon.submit(.gattDatabase(id, .address(T.band)), from: caller).get().values
        guard case .string(let json)? = values.first, let database = try? GattDatabase(json: json) else { throw RelinkError(.failed, "reply \(values)") }
        return database
    }

    static func error(_ body: () async throws(RelinkError) -> Void) async -> RelinkError? {
        do { try await body() } catch { return error }
        return nil
    }

    /// The database in `Register`'s restored state for the band, if any.
    static func restoredDatabase(_ d: InProcessDaemon) async throws -> GattDatabase? {
        let restored = try await AdapterStateTests.restored(d, T.id)
        guard case .array(_, let entries)? = restored["peripherals"] else { return nil }
        for entry in entries {
            guard case .dictionary(_, _, let pairs) = entry.unwrapped else { continue }
            for pair in pairs where pair.key.stringValue == "gatt_database" {
                if case .string(let json) = pair.value.unwrapped { return try GattDatabase(json: json) }
            }
        }
        return nil
    }

    @Test func theDatabaseAsListedIsWhatThePeripheralPublished() async throws {
        let d = try await Self.linked(FakeBlueZ())
        let database = try await Self.database(d)
        #expect(database.services == Self.expected())
        let heart = try #require(database.service(T.heartRate))
        #expect(heart.isPrimary && heart.includedServices == [Self.battery])
        #expect(database.service(Self.battery)?.isPrimary == false)
        #expect(heart.characteristic(Self.location)?.properties.names == ["read", "writeWithoutResponse"])
        #expect(heart.characteristic(T.measurement)?.descriptors.map(\.uuid) == [GattDatabase.userDescription, GattDatabase.presentationFormat, Self.vendor])
        await d.stop()
    }

    @Test func theDatabaseIsStoredAndHandedBackAfterARestartWithTheTimeItWasRead() async throws {
        let fake = FakeBlueZ()
        let directory = try InProcessDaemon.temporaryDirectory()
        let d = try await Self.linked(fake, directory: directory)
        var stored: GattDatabase?
        try await eventually("the database is in the restored state") {
            stored = try await Self.restoredDatabase(d)
            return stored != nil
        }
        #expect(stored?.services == Self.expected())
        await d.stop()
        await fake.setInRange(T.band, false)  // after the restart it is cached, not read again
        let again = try await InProcessDaemon(fake: fake, directory: directory)
        let restored = try await Self.restoredDatabase(again)
        #expect(restored?.services == Self.expected())
        #expect(restored?.readAt == stored?.readAt, "when it was read, to the millisecond")
        await again.stop()
    }

    @Test func aChangedDatabaseIsAServicesChangedEventWithTheNewOne() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linked(fake)
        try await eventually("the first database is stored") { try await Self.restoredDatabase(d) != nil }
        #expect(try await d.events(T.id).allSatisfy { $0.kind != "services-changed" }, "the first read is no change")
        await fake.replaceServices(T.band, with: Self.services(extra: true))
        var changed: GattDatabase?
        try await eventually("services-changed") {
            changed = try await d.events(T.id).compactMap { if case .servicesChanged(_, let db)? = $0.payload { db } else { nil } }.last
            return changed != nil
        }
        #expect(changed?.services == Self.expected(extra: true))
        #expect(try await Self.restoredDatabase(d)?.services == Self.expected(extra: true))
        #expect(try await d.events(T.id).filter { $0.kind == "services-changed" }.count == 1, "one change, one event")
        await d.stop()
    }

    @Test func aDescriptorIsReadAndWrittenByItsThreeUUIDs() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linked(fake)
        func key(_ descriptor: BluetoothUUID) -> DescriptorKey {
            DescriptorKey(characteristic: T.key, descriptor: descriptor)
        }
        let description = try await d.daemon.submit(.locateDescriptor(T.id, .address(T.band), key(GattDatabase.userDescription), forWriting: false),
                                                    from: Self.caller).get().characteristic
        #expect(try await fake.readDescriptor(try #require(description)) == Array("Heart rate".utf8))
        let vendor = try #require(try await d.daemon.submit(.locateDescriptor(T.id, .address(T.band), key(Self.vendor), forWriting: true),
                                                              from: Self.caller).get().characteristic)
        try await d.daemon.bluez.writeDescriptor(vendor, [7, 8])
        #expect(await fake.descriptorValue(T.band, key(Self.vendor)) == [7, 8])
        #expect(try await d.daemon.bluez.readDescriptor(vendor) == [7, 8])
        await d.stop()
    }

    @Test func badInputsGetTypedErrorsNamingWhatIsUnknown() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.linked(fake)
        func locate(_ key: DescriptorKey, write: Bool = false) async -> RelinkError? {
            await Self.error { () async throws(RelinkError) in
                _ = try await d.daemon.submit(.locateDescriptor(T.id, .address(T.band), key, forWriting: write), from: Self.caller).get()
            }
        }
        let noDescriptor = BluetoothUUID(shortValue: 0x2908)
        let unknownDescriptor = await locate(DescriptorKey(characteristic: T.key, descriptor: noDescriptor))
        #expect(unknownDescriptor?.code == .unknownDescriptor && unknownDescriptor?.message.contains(noDescriptor.string) == true, "\(String(describing: unknownDescriptor))")
        let noService = BluetoothUUID(shortValue: 0xFFF0)
        let unknownService = await locate(DescriptorKey(characteristic: CharacteristicKey(service: noService, characteristic: T.measurement), descriptor: GattDatabase.userDescription))
        #expect(unknownService?.code == .unknownCharacteristic && unknownService?.message.contains("service \(noService.string)") == true, "\(String(describing: unknownService))")
        let noCharacteristic = BluetoothUUID(shortValue: 0x2A99)
        let unknownCharacteristic = await locate(DescriptorKey(characteristic: CharacteristicKey(service: T.heartRate, characteristic: noCharacteristic), descriptor: GattDatabase.userDescription))
        #expect(unknownCharacteristic?.code == .unknownCharacteristic && unknownCharacteristic?.message.contains("characteristic \(noCharacteristic.string)") == true)
        // The CCCD is the subscriptions': written by nobody else, read by anyone.
        let cccd = await locate(DescriptorKey(characteristic: T.key, descriptor: GattDatabase.clientCharacteristicConfiguration), write: true)
        #expect(cccd?.code == .notPermitted, "\(String(describing: cccd))")
        // Another user's identifier looks missing; an identifier without an intent on the band gets no database.
        let stranger = APICaller(name: ":1.9", uid: 1001)
        #expect(await Self.error { () async throws(RelinkError) in _ = try await Self.database(d, from: stranger) }?.code == .unknownIdentifier)
        let other = try RestoreIdentifier("other")
        try await d.submit(.register(other, uid: 1001))
        #expect(await Self.error { () async throws(RelinkError) in _ = try await Self.database(d, other, from: stranger) }?.code == .unknownPeripheral)
        // Linked but not resolved (real bluetoothd's merged drop and reconnect): no waiting, a typed error.
        await fake.mergedDropAndReconnect(T.band)
        #expect(await Self.error { () async throws(RelinkError) in _ = try await Self.database(d) }?.code == .servicesNotResolved)
        await fake.setInRange(T.band, false)
        try await eventually("the link is down") { await d.state(T.id, T.band) != "connected" }
        #expect(await Self.error { () async throws(RelinkError) in _ = try await Self.database(d) }?.code == .notConnected)
        await d.stop()
    }
}
