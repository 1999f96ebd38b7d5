import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// Issue 23 in-process: relinkd hosts an identifier's services and
/// advertisement with the fake bluetoothd, forwards a remote central's
/// requests to the program, registers everything again by itself after a
/// relinkd restart, a bluetoothd restart and a power cycle, and answers
/// what it can while no program is attached.
@Suite("Daemon in-process: the peripheral role")
struct PeripheralRoleTests {
    static let id = (try? RestoreIdentifier("org.example.sensor")) ?? { fatalError("valid") }()
    static let caller = APICaller(name: ":1.7", uid: 0)
    static let service = BluetoothUUID(high: 0x8e7f_2a00_4b2c_4d1e, low: 0x9a3f_7265_6c69_6e6b)
    static let model = CharacteristicKey(service: service, characteristic: BluetoothUUID(shortValue: 0x2A24))
    static let level = CharacteristicKey(service: service, characteristic: BluetoothUUID(shortValue: 0x2A19))
    static let live = CharacteristicKey(service: service, characteristic: BluetoothUUID(shortValue: 0x2A6E))
    static let control = CharacteristicKey(service: service, characteristic: BluetoothUUID(high: 0x8e7f_2a01_4b2c_4d1e, low: 0x9a3f_7265_6c69_6e6b))
    static var root: ObjectPath { Daemon.hostedRoot(id) }

    /// A static model string, a cacheable level (read, notify), an
    /// uncached live value (read) and a control point (write).
    static let serviceJSON = """
        {"uuid": "\(service.string)", "characteristics": [
          {"uuid": "2a24", "properties": ["read"], "permissions": ["readable"], "value": [83, 49]},
          {"uuid": "2a19", "properties": ["read", "notify"], "permissions": ["readable"], "cacheable": true,
           "descriptors": [{"uuid": "2901", "value": [76]}]},
          {"uuid": "2a6e", "properties": ["read"], "permissions": ["readable"]},
          {"uuid": "\(control.characteristic.string)", "properties": ["write", "writeWithoutResponse"], "permissions": ["writeable"]}]}
        """
    static let advertisementJSON = #"{"localName": "Sensor-1", "serviceUUIDs": ["180f"]}"#

    static func call(_ d: InProcessDaemon, _ request: PeripheralManagerRequest) async throws(RelinkError) -> [DBusValue] {
        try await d.daemon.submit(.peripheralManager(id, request), from: caller).get().values
    }

    static func register(_ d: InProcessDaemon) async throws -> [String: DBusValue] { try await AdapterStateTests.restored(d, id) }

    /// Registers, publishes the service and advertises.
    static func published(_ fake: FakeBlueZ, directory: String? = nil, clock: DaemonClock = .continuous) async throws -> InProcessDaemon {
        let d = try await InProcessDaemon(fake: fake, directory: try directory ?? InProcessDaemon.temporaryDirectory(), clock: clock)
        _ = try await register(d)
        _ = try await call(d, .addService(try PublishedService(json: serviceJSON)))
        _ = try await call(d, .startAdvertising(try PeripheralAdvertisement(json: advertisementJSON)))
        return d
    }

    static func pmEvents(_ d: InProcessDaemon) async throws -> [PeripheralManagerEvent] {
        try await d.events(id).compactMap { if case .peripheralManager(let e)? = $0.payload { e } else { nil } }
    }

    /// The number of the newest `read-request` or `write-request` waiting for an answer.
    static func waitingRequest(_ d: InProcessDaemon, after previous: UInt64 = 0) async throws -> UInt64 {
        var number: UInt64 = 0
        try await eventually("a request event") {
            for event in try await pmEvents(d).reversed() {
                switch event {
                case .readRequest(let n, _, _, _, _) where n > previous, .writeRequest(let n, _, _, _, _, _, _) where n > previous:
                    number = n
                    return true
                default: continue
                }
            }
            return false
        }
        return number
    }

    @Test func publishedServicesAndAdvertisementAreRegisteredAndRequestsReachTheProgram() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.published(fake)
        defer { Task { await d.stop() } }
        #expect(await fake.isApplicationRegistered(Self.root))
        #expect(await fake.hostedAdvertisement(Self.root)?.localName == "Sensor-1")
        #expect(await fake.hostedServices(Self.root).map(\.uuid) == [Self.service])

        // A static value is answered by relinkd; the program is not asked.
        #expect(await fake.remoteRead(Self.root, Self.model) == .value([83, 49]))
        #expect(await fake.remoteRead(Self.root, Self.model, offset: 1) == .value([49]))
        #expect(try await Self.pmEvents(d).isEmpty)

        // A dynamic read goes to the program, which answers it.
        let read = Task { await fake.remoteRead(Self.root, Self.level, central: "AA:BB:CC:DD:EE:01") }
        let number = try await Self.waitingRequest(d)
        #expect(try await Self.pmEvents(d).last == .readRequest(request: number, central: "AA:BB:CC:DD:EE:01", characteristic: Self.level, offset: 0))
        _ = try await Self.call(d, .respond(number, [42]))
        #expect(await read.value == .value([42]))
        // Answered once: a second answer names no request.
        await #expect(throws: RelinkError.self) { try await Self.call(d, .respond(number, [43])) }

        // A write with response waits for the program's answer; its ATT error reaches the central.
        let write = Task { await fake.remoteWrite(Self.root, Self.control, [1, 2], central: "AA:BB:CC:DD:EE:01") }
        let writeNumber = try await Self.waitingRequest(d, after: number)
        _ = try await Self.call(d, .respondWithError(writeNumber, .insufficientAuthorization))
        #expect(await write.value == .error(.insufficientAuthorization))

        // Subscribed centrals get updates.
        #expect(await fake.remoteSubscribe(Self.root, Self.level) == .done)
        try await eventually("subscribed event") { try await Self.pmEvents(d).contains(.subscribed(central: "unknown", characteristic: Self.level)) }
        _ = try await Self.call(d, .updateValue(Self.level, [7]))
        try await eventually("the central got the update") { await fake.received(Self.root, Self.level) == [[7]] }
    }

    @Test func aRestartedRelinkdRegistersByItselfAndAnswersWhileTheProgramIsAway() async throws {
        let fake = FakeBlueZ()
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await Self.published(fake, directory: directory)
        #expect(await fake.remoteSubscribe(Self.root, Self.level) == .done)
        let read = Task { await fake.remoteRead(Self.root, Self.level) }
        _ = try await Self.call(first, .respond(try await Self.waitingRequest(first), [42]))  // cached: level is cacheable
        #expect(await read.value == .value([42]))
        await first.stop()
        #expect(await !fake.isApplicationRegistered(Self.root), "bluetoothd unregisters a client's application when it leaves the bus")

        let d = try await InProcessDaemon(fake: fake, directory: directory)
        defer { Task { await d.stop() } }
        // Registered again before any client came back.
        #expect(await fake.isApplicationRegistered(Self.root))
        #expect(await fake.isAdvertising(Self.root))
        #expect(await fake.remoteRead(Self.root, Self.level) == .value([42]), "the cached value")
        #expect(await fake.remoteRead(Self.root, Self.live) == .error(.unlikelyError), "an uncached dynamic value")
        // A write is stored, then accepted.
        #expect(await fake.remoteWrite(Self.root, Self.control, [9], central: "AA:BB:CC:DD:EE:02") == .done)
        #expect(try await Self.pmEvents(d).last
            == .writeRequest(request: 0, central: "AA:BB:CC:DD:EE:02", characteristic: Self.control, offset: 0, value: [9], kind: .request))

        // Register hands the peripheral role back (willRestoreState).
        let restored = try await Self.register(d)
        guard case .string(let json)? = restored["peripheral_manager"] else { Issue.record("no peripheral_manager in \(restored)"); return }
        let record = try PeripheralManagerRecord(json: json)
        #expect(record.services == [try PublishedService(json: Self.serviceJSON)])
        #expect(record.advertisement?.localName == "Sensor-1")
        #expect(record.cachedValues[Self.level] == [42])
        #expect(record.subscribers[Self.level] == ["unknown"])
    }

    /// Gateway finding G13: on Debian 13 (bluez 5.82) a restarted
    /// bluetoothd showed the adapter before its `GattManager1` and
    /// `LEAdvertisingManager1`; relinkd's registration in between was
    /// answered `UnknownMethod`, journalled, and never tried again, so the
    /// advertisement stayed gone. It is registered once the managers appear.
    @Test func aRegistrationMadeBeforeBluetoothdHasItsManagersIsMadeWhenTheyAppear() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.published(fake)
        defer { Task { await d.stop() } }
        await fake.withholdPeripheralManagers()
        let calls = await fake.hostingCallCount
        await fake.restartBluetoothd()
        try await eventually("the registration tried with the new bluetoothd") { await fake.hostingCallCount > calls }
        #expect(await !fake.isAdvertising(Self.root), "refused while the managers are missing")
        await fake.peripheralManagersAppear()
        try await eventually("registered once the managers appeared") {
            let (registered, advertising) = await (fake.isApplicationRegistered(Self.root), fake.isAdvertising(Self.root))
            return registered && advertising
        }
    }

    @Test func aBluetoothdRestartAndAPowerCycleRegisterEverythingAgain() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.published(fake)
        defer { Task { await d.stop() } }
        let before = await fake.hostingRegistrationCount
        await fake.restartBluetoothd()
        try await eventually("registered with the new bluetoothd") {
            let (registered, advertising, count) = await (fake.isApplicationRegistered(Self.root), fake.isAdvertising(Self.root), fake.hostingRegistrationCount)
            return registered && advertising && count > before
        }
        let afterRestart = await fake.hostingRegistrationCount
        await fake.restartBluetoothdGracefully()
        try await eventually("registered after a SIGTERM restart") {
            let (registered, count) = await (fake.isApplicationRegistered(Self.root), fake.hostingRegistrationCount)
            return registered && count > afterRestart
        }
        await fake.setAdapterPowered(false)
        await fake.setAdapterPowered(true)
        try await eventually("registered after a power cycle") {
            let (registered, advertising) = await (fake.isApplicationRegistered(Self.root), fake.isAdvertising(Self.root))
            return registered && advertising
        }
    }

    @Test func aProgramThatDoesNotAnswerInTimeLeavesTheCentralAnATTError() async throws {
        let fake = FakeBlueZ()
        let clock = DaemonClock.manual()
        let d = try await Self.published(fake, clock: clock)
        defer { Task { await d.stop() } }
        let read = Task { await fake.remoteRead(Self.root, Self.live) }
        let number = try await Self.waitingRequest(d)
        let answered = Task { await read.value }
        try await eventually("answered by relinkd", advancing: clock, by: .seconds(1), upTo: .seconds(20)) {
            await d.daemon.peripheralRole.pending.count == 0
        }
        #expect(await answered.value == .error(.unlikelyError))
        do {
            _ = try await Self.call(d, .respond(number, [1]))
            Issue.record("an answer after the bound was taken")
        } catch {
            #expect(error.code == .unknownRequest)
        }
    }

    @Test func badInputIsRefusedWithATypedErrorAndNothingPublishedChanges() async throws {
        let fake = FakeBlueZ()
        let d = try await Self.published(fake)
        defer { Task { await d.stop() } }
        let state = try await Self.call(d, .state)
        func code(_ request: PeripheralManagerRequest) async -> RelinkErrorName? {
            do { _ = try await Self.call(d, request); return nil } catch { return error.code }
        }
        func service(_ json: String) throws -> PublishedService { try PublishedService(json: json) }
        #expect(await code(.addService(try service(Self.serviceJSON))) == .alreadyExists)
        #expect(await code(.addService(try service(#"{"uuid": "1800", "characteristics": []}"#))) == .invalidArguments)
        #expect(await code(.addService(try service(#"{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": ["read", "notify"], "permissions": ["readable"], "value": [1]}]}"#))) == .invalidArguments)
        #expect(await code(.addService(try service(#"{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": ["write"], "permissions": ["readable"]}]}"#))) == .invalidArguments)
        #expect(await code(.addService(try service(#"{"uuid": "180f", "includes": ["181a"], "characteristics": []}"#))) == .invalidArguments)
        #expect(await code(.startAdvertising(try PeripheralAdvertisement(json: #"{"localName": "a name far too long for thirty-one bytes"}"#))) == .invalidArguments)
        #expect(await code(.respond(999, [1])) == .unknownRequest)
        #expect(await code(.respond(1, Array(repeating: 0, count: 513))) == .invalidArguments)
        #expect(await code(.updateValue(Self.model, [1])) == .notSupported, "no notify property")
        #expect(await code(.updateValue(CharacteristicKey(service: Self.service, characteristic: BluetoothUUID(shortValue: 0x2A00)), [1])) == .unknownCharacteristic)
        #expect(await code(.removeService(BluetoothUUID(shortValue: 0x1234))) == .unknownCharacteristic)
        #expect(try await Self.call(d, .state) == state, "nothing published changed")
        #expect(await fake.hostedServices(Self.root).map(\.uuid) == [Self.service])
    }
}
