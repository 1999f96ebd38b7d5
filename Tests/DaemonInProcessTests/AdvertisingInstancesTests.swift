import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// Issue 23: the controller's advertising instances. Two identifiers past
/// the limit: the second `StartAdvertising` gets a typed error naming the
/// limit and nothing published changes; an advertisement restored after a
/// restart that does not fit waits (shown in `State`), its services
/// registered, and starts when another advertisement stops.
@Suite("Daemon in-process: the controller's advertising instances")
struct AdvertisingInstancesTests {
    typealias P = PeripheralRoleTests
    static let other = (try? RestoreIdentifier("org.example.second")) ?? { fatalError("valid") }()
    static let otherAdvertisement = #"{"localName": "Second", "serviceUUIDs": ["180a"]}"#
    static let otherService = #"{"uuid": "180a", "characteristics": [{"uuid": "2a29", "properties": ["read"], "permissions": ["readable"], "value": [65]}]}"#

    static func call(_ d: InProcessDaemon, _ id: RestoreIdentifier, _ request: PeripheralManagerRequest) async throws(RelinkError) -> [DBusValue] {
        try await d.daemon.submit(.peripheralManager(id, request), from: P.caller).get().values
    }

    /// The `State` document of an identifier, as JSON.
    static func state(_ d: InProcessDaemon, _ id: RestoreIdentifier) async throws -> [String: Any] {
        guard case .string(let json)? = try await call(d, id, .state).first,
              let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return [:] }
        return object
    }

    /// The second identifier, registered with its service published.
    static func second(_ d: InProcessDaemon) async throws {
        _ = try await AdapterStateTests.restored(d, other)
        _ = try await call(d, other, .addService(try PublishedService(json: otherService)))
    }

    @Test func startAdvertisingPastTheLimitIsATypedErrorAndNothingChanges() async throws {
        let fake = FakeBlueZ()
        await fake.setAdvertisingInstances(1)
        let d = try await P.published(fake)
        defer { Task { await d.stop() } }
        try await Self.second(d)
        let registrations = await fake.hostingRegistrationCount

        let advertisement = try PeripheralAdvertisement(json: Self.otherAdvertisement)
        do {
            _ = try await Self.call(d, Self.other, .startAdvertising(advertisement))
            Issue.record("StartAdvertising past the limit was accepted")
        } catch {
            #expect(error.code == .advertisingLimitReached && error.message.contains("advertising instance"), "\(error)")
        }
        let otherRoot = Daemon.hostedRoot(Self.other)
        #expect(try await Self.state(d, Self.other)["advertisement"] == nil, "the refused advertisement is not kept")
        #expect(await fake.isApplicationRegistered(otherRoot), "its services stay registered")
        #expect(await fake.hostedAdvertisement(P.root)?.localName == "Sensor-1", "the first identifier still advertises")
        #expect(await fake.activeAdvertisingInstances == 1)
        #expect(await fake.hostingRegistrationCount > registrations)
    }

    @Test func aRestoredAdvertisementThatDoesNotFitWaitsAndStartsWhenAnotherStops() async throws {
        let fake = FakeBlueZ()
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await P.published(fake, directory: directory)
        try await Self.second(first)
        _ = try await Self.call(first, Self.other, .startAdvertising(try PeripheralAdvertisement(json: Self.otherAdvertisement)))
        await first.stop()

        // The controller now has one instance: the first identifier (in
        // identifier order) takes it, the second's advertisement waits.
        await fake.setAdvertisingInstances(1)
        let d = try await InProcessDaemon(fake: fake, directory: directory)
        defer { Task { await d.stop() } }
        let otherRoot = Daemon.hostedRoot(Self.other)
        let firstAdvertises = await fake.isAdvertising(P.root), otherAdvertises = await fake.isAdvertising(otherRoot)
        #expect(firstAdvertises != otherAdvertises, "one of the two advertises")
        let (waiting, advertising) = firstAdvertises ? (Self.other, P.id) : (P.id, Self.other)
        #expect(await fake.isApplicationRegistered(Daemon.hostedRoot(waiting)), "the waiting identifier's services are registered")
        _ = try await AdapterStateTests.restored(d, waiting)
        let state = try await Self.state(d, waiting)
        #expect(state["advertisementWaiting"] as? Bool == true, "\(state)")
        #expect(state["advertisement"] != nil, "kept, never dropped")
        #expect(try await Self.state(d, advertising)["advertisementWaiting"] == nil)

        // A change of the waiting identifier stands; its advertisement still waits.
        _ = try await Self.call(d, waiting, .removeAllServices)
        #expect(try await Self.state(d, waiting)["advertisementWaiting"] as? Bool == true)

        // The other stops advertising: the waiting one starts.
        _ = try await AdapterStateTests.restored(d, advertising)
        _ = try await Self.call(d, advertising, .stopAdvertising)
        #expect(await fake.isAdvertising(Daemon.hostedRoot(waiting)))
        #expect(try await Self.state(d, waiting)["advertisementWaiting"] == nil)
        #expect(await fake.activeAdvertisingInstances == 1)
    }
}
