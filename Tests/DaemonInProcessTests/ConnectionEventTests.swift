import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// `Central1.RegisterForConnectionEvents` (issue 35 item 3; CoreBluetooth's
/// `registerForConnectionEvents(options:)`) through the whole daemon, on the
/// fake bluetoothd: another program's links to a device that offers the
/// registered service are told up and down, with bluetoothd's cause; the
/// registration and what it was told survive a restart of relinkd, which
/// tells a link that ended while it was stopped; bluetoothd's restart ends
/// every told link; the refusals are typed.
@Suite("Daemon in-process: connection events")
struct ConnectionEventTests {
    typealias T = RestoreCycleTests

    /// The identifier's `connection-event`s: `+address` for peer-connected,
    /// `-address reason` for peer-disconnected (`?` for no address).
    static func told(_ d: InProcessDaemon, _ id: RestoreIdentifier = T.id) async throws -> [String] {
        try await d.events(id).compactMap { event -> String? in
            guard case .connectionEvent(_, let address, let connected, let reason)? = event.payload else { return nil }
            return (connected ? "+" : "-") + (address?.string ?? "?") + (reason.map { " \($0.errorName)" } ?? "")
        }
    }

    /// `Register`'s `connection_events`, as `[key: [strings]]`.
    static func restored(_ d: InProcessDaemon) async throws -> [String: [String]] {
        guard case .dictionary(_, _, let entries)? = try await AdapterStateTests.restored(d, T.id)["connection_events"] else { return [:] }
        return Dictionary(entries.compactMap { entry -> (String, [String])? in
            guard let key = entry.key.stringValue, case .array(_, let items) = entry.value.unwrapped else { return nil }
            return (key, items.compactMap(\.stringValue))
        }) { a, _ in a }
    }

    static func register(_ d: InProcessDaemon, services: Set<BluetoothUUID> = [T.heartRate], peripherals: [PeripheralRef] = []) async throws {
        try await d.api(.registerForConnectionEvents(T.id, services: services, peripherals: peripherals))
    }

    @Test func anotherProgramsLinksAreToldUpAndDownWithBluetoothdsCause() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        await fake.setQuirk(disconnectedSignal: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(T.id, uid: 0))
        try await Self.register(d)
        #expect(try await Self.told(d).isEmpty, "nothing is connected yet")

        await fake.connectByAnotherProgram(T.band)
        try await eventually("told the band's link came up") { try await Self.told(d) == ["+\(T.band.string)"] }
        let band = try #require(await d.daemon.peripheralID(for: T.band), "a device that matched is a peripheral relinkd knows")
        #expect(try await Self.restored(d)["connected"] == [band.description])
        #expect(try await Self.restored(d)["services"] == [T.heartRate.string])

        await fake.dropLink(T.band, cause: .timeout)
        try await eventually("told it went down") { try await Self.told(d).count == 2 }
        #expect(try await Self.told(d).last == "-\(T.band.string) \(RelinkErrorName.linkLost.rawValue)")
        guard case .connectionEvent(_, _, false, let reason?)? = try await d.events(T.id).last?.payload else { Issue.record("no reason"); return }
        #expect(reason.message.contains(LinkEndCause.timeout.rawValue), "\(reason)")
        #expect(try await Self.restored(d)["connected"] == [])

        try await d.api(.unregisterForConnectionEvents(T.id))
        #expect(try await Self.restored(d).isEmpty)
        await fake.connectByAnotherProgram(T.band)
        try await eventually("bluetoothd shows the band connected") { await fake.isConnected(T.band) }
        try await Self.register(d, services: [BluetoothUUID(shortValue: 0x180F)])
        #expect(try await Self.told(d).count == 2, "unregistered, and a service the band does not offer: nothing more")
        await d.stop()
    }

    @Test func theRegistrationAndWhatItWasToldSurviveARestart() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await first.submit(.register(T.id, uid: 0))
        await fake.connectByAnotherProgram(T.band)
        try await eventually("bluetoothd shows the band connected") { await fake.isConnected(T.band) }
        try await Self.register(first)
        #expect(try await Self.told(first) == ["+\(T.band.string)"], "a link up when registering is told at once, in the same commit")
        await first.stop()

        await fake.dropLink(T.band)
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("told the link ended while relinkd was stopped") { try await Self.told(second).count == 2 }
        let last = try await second.events(T.id).last?.payload
        guard case .connectionEvent(_, let address, false, let reason?)? = last else { Issue.record("\(String(describing: last))"); return }
        #expect(address == T.band, "the address stored for it")
        #expect(reason.message.contains("not running"), "\(reason)")
        await fake.connectByAnotherProgram(T.band)
        try await eventually("the registration still holds") { try await Self.told(second).count == 3 }

        await fake.restartBluetoothd()
        try await eventually("bluetoothd's restart ends the link") { try await Self.told(second).count == 4 }
        #expect(try await Self.told(second) == ["+\(T.band.string)", "-\(T.band.string) \(RelinkErrorName.linkLost.rawValue)",
                                                "+\(T.band.string)", "-\(T.band.string) \(RelinkErrorName.bluetoothdRestarted.rawValue)"])
        await second.stop()
    }

    /// A user's identifier told of another program's link may name that
    /// peripheral (adopt it, retrieve it) after relinkd restarts too, as
    /// before: what a registration was told stays its own to name.
    @Test func aToldPeripheralStaysNameableByItsUserAcrossARestart() async throws {
        let alice = RetrievePeripheralsTests.alice
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await first.submit(.register(T.id, uid: alice.uid))
        try await first.api(.registerForConnectionEvents(T.id, services: [T.heartRate], peripherals: []), as: alice)
        await fake.connectByAnotherProgram(T.band)
        try await eventually("told the band's link") { try await Self.told(first) == ["+\(T.band.string)"] }
        let named = try await first.api(.retrievePeripherals(T.id, [.address(T.band)]), as: alice)
        #expect(RetrievePeripheralsTests.addresses(named) == [T.band.string])
        await first.stop()

        let second = try await InProcessDaemon(fake: fake, directory: directory)
        let again = try await second.api(.retrievePeripherals(T.id, [.address(T.band)]), as: alice)
        #expect(RetrievePeripheralsTests.addresses(again) == [T.band.string], "still alice's to name after the restart")
        #expect(try await Self.told(second) == ["+\(T.band.string)"], "still up: nothing told again")
        await second.stop()
    }

    @Test func registeringWithNothingOrAnUnknownPeripheralIsRefused() async throws {
        let d = try await InProcessDaemon(fake: FakeBlueZ(), directory: try InProcessDaemon.temporaryDirectory())
        try await d.submit(.register(T.id, uid: 0))
        for (services, peripherals, code) in [([], [], RelinkErrorName.invalidArguments),
                                              ([T.heartRate], [PeripheralRef.id(PeripheralID())], .unknownPeripheral)] as [(Set<BluetoothUUID>, [PeripheralRef], RelinkErrorName)] {
            do {
                try await Self.register(d, services: services, peripherals: peripherals)
                Issue.record("accepted \(services) \(peripherals)")
            } catch let error as RelinkError {
                #expect(error.code == code, "\(error)")
            }
        }
        #expect(try await Self.restored(d).isEmpty, "nothing registered")
        await d.stop()
    }
}
