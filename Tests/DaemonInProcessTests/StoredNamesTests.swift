import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// G14 (docs/real-bluez.md): after a reboot (a new bluetoothd, a new
/// relinkd), bluetoothd showed a lock's GAP name while relinkd saw the device
/// disconnected, and relinkd took it for the advertising name. relinkd now
/// gives the mirror the names it stored at start-up, so the GAP name stays
/// the GAP name and no `name-updated` says otherwise.
@Suite("Daemon in-process: stored names after a reboot")
struct StoredNamesTests {
    typealias T = RestoreCycleTests

    static func nameUpdates(_ d: InProcessDaemon) async throws -> [String] {
        try await d.events(T.id).compactMap { event -> String? in
            guard case .nameUpdated(_, let update)? = event.payload else { return nil }
            return "\(update.change.source.rawValue) \(update.change.current)"
        }
    }

    @Test func aGAPNameBluetoothdShowsWhileDisconnectedAfterARebootStaysTheGAPName() async throws {
        let directory = try InProcessDaemon.temporaryDirectory()
        let before = FakeBlueZ()
        await before.add(T.bandPeripheral(), known: true)
        let first = try await InProcessDaemon(fake: before, directory: directory)
        try await T.linked(first)
        try await eventually("the band's GAP name stored") {
            await first.daemon.known.peripherals.values.first?.gapName?.value == "Wrist Band"
        }
        await first.stop()

        // The reboot: a new bluetoothd that shows the advertising name it cached.
        let after = FakeBlueZ()
        await after.add(T.bandPeripheral(inRange: false), known: true)
        let second = try await InProcessDaemon(fake: after, directory: directory)
        let path = try #require(await after.mirror.device(address: T.band.string, adapter: second.daemon.adapterPath)?.path)
        #expect(await after.mirror.knownNames[path]?.gapName == "Wrist Band", "start-up gave the mirror the stored names")
        let told = try await Self.nameUpdates(second).count
        await after.reportName(T.band, "Wrist Band")
        await after.reportName(T.band, "HRM-2C42")
        try await eventually("relinkd saw both, in order") {
            await second.daemon.known.peripherals.values.first?.advertisingName?.value == "HRM-2C42"
        }
        let updates = try await Self.nameUpdates(second)
        #expect(updates.dropFirst(told).allSatisfy { !$0.hasPrefix("advertising Wrist Band") }, "\(updates)")
        #expect(updates.last == "advertising HRM-2C42", "\(updates)")
        await second.stop()
    }
}
