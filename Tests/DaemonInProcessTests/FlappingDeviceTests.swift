import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// A device at the edge of range (issue 31, regression 1): its links last a
/// second or two and carry values, then it is away for a moment and back.
/// relinkd reconnects it each time it comes back, with no back-off, and
/// every value it sends while linked is stored once, in order. Time is a
/// manual clock that never moves: every link is "short" (within the short
/// link limit of coming up), and a back-off would never end, so a
/// reconnection here can only be at once (background auto-connect).
@Suite("Daemon in-process: a device flapping at the edge of range")
struct FlappingDeviceTests {
    typealias R = RestoreCycleTests

    static func count(_ d: InProcessDaemon, _ kind: String) async throws -> Int {
        try await d.events(R.id).filter { $0.kind == kind }.count
    }

    static func startNotifies(_ fake: FakeBlueZ) async -> Int {
        await fake.calls.filter { if case .startNotify = $0 { true } else { false } }.count
    }

    @Test func everyComebackIsReconnectedAtOnceAndNoValueIsLost() async throws {
        let fake = FakeBlueZ()
        await fake.add(R.bandPeripheral(), known: true)
        let clock = DaemonClock.manual()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(), clock: clock)
        try await R.linked(d)
        let cycles = 8
        var sent: [[UInt8]] = []
        for cycle in 1 ... cycles {
            try await eventually("cycle \(cycle): linked and armed") {
                guard try await Self.count(d, "connected") == cycle else { return false }
                return await Self.startNotifies(fake) >= cycle
            }
            for n: UInt8 in 1 ... 3 {
                let value: [UInt8] = [0, UInt8(cycle), n]
                sent.append(value)
                await fake.push(R.band, service: R.heartRate, characteristic: R.measurement, value)
            }
            try await eventually("cycle \(cycle): its values stored") { R.values(try await d.events(R.id)).count == sent.count }
            await fake.setInRange(R.band, false)
            try await eventually("cycle \(cycle): the drop reported") { try await Self.count(d, "disconnected") == cycle }
            await fake.setInRange(R.band, true)
        }
        try await eventually("back after the last cycle, with no clock moved") { try await Self.count(d, "connected") == cycles + 1 }
        #expect(R.values(try await d.events(R.id)) == sent, "every value sent while linked, once, in order")
        guard let peripheral = await d.daemon.peripheralID(for: R.band),
              let machine = await d.daemon.core.machines[ConnectionIntentID(identifier: R.id, peripheral: peripheral)] else {
            Issue.record("no machine for the band")
            return
        }
        #expect(machine.consecutiveShortLinks == 0, "links that carried values are not short links")
        await d.stop()
    }

    /// With BlueZ 5.83's `Device1.Disconnected` (played by the fake), a
    /// peripheral that ends each link on an authentication failure counts
    /// them as short links (backed off from the second) even though values
    /// came on them; the event's reason names bluetoothd's cause.
    @Test func authenticationFailuresBackOffEvenAfterValues() async throws {
        let fake = FakeBlueZ()
        await fake.setQuirk(disconnectedSignal: true)
        await fake.add(R.bandPeripheral(), known: true)
        let clock = DaemonClock.manual()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(), clock: clock)
        try await R.linked(d)
        for cycle in 1 ... 2 {
            try await eventually("cycle \(cycle): linked and armed") {
                guard try await Self.count(d, "connected") == cycle else { return false }
                return await Self.startNotifies(fake) >= cycle
            }
            await fake.push(R.band, service: R.heartRate, characteristic: R.measurement, [0, UInt8(cycle)])
            try await eventually("cycle \(cycle): its value stored") { R.values(try await d.events(R.id)).count == cycle }
            await fake.dropLink(R.band, cause: .authentication)
            try await eventually("cycle \(cycle): the drop reported") { try await Self.count(d, "disconnected") == cycle }
        }
        // Counted as links that failed at once (the back-off itself may be
        // cut short here: the fake's peripheral, in range, is linked again
        // by bluetoothd's auto-connect before relinkd's disarming reaches it,
        // and a link that comes up while backing off is taken).
        try await eventually("two authentication failures in a row counted as short links") {
            guard let peripheral = await d.daemon.peripheralID(for: R.band) else { return false }
            return await d.daemon.core.machines[ConnectionIntentID(identifier: R.id, peripheral: peripheral)]?.consecutiveShortLinks == 2
        }
        guard case .disconnected(_, let reason?)? = try await d.events(R.id).last(where: { $0.kind == "disconnected" })?.payload else {
            Issue.record("no disconnected event with a reason")
            return
        }
        #expect(reason.message.contains(LinkEndCause.authentication.rawValue), "the reason names bluetoothd's cause: \(reason.message)")
        await d.stop()
    }
}
