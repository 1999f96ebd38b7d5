import BlueZ
import BlueZFake
import DBus
import Foundation
@testable import RelinkDaemon
import RelinkModel
import Testing

/// Issue 23 on the bench: a subscribed central saw a program's updates
/// reordered when several were on their way at once (each was handed to
/// the bus by its own task). relinkd sends them one at a time, in order.
@Suite("Daemon in-process: the peripheral role's updates keep their order")
struct UpdateOrderTests {
    @Test func updatesOnTheirWayTogetherReachTheCentralInOrder() async throws {
        let fake = FakeBlueZ()
        let d = try await PeripheralRoleTests.published(fake)
        defer { Task { await d.stop() } }
        let root = PeripheralRoleTests.root, level = PeripheralRoleTests.level
        #expect(await fake.remoteSubscribe(root, level) == .done)
        // The first update is slow to reach bluetoothd; the others are made meanwhile.
        await fake.holdFirstNotification()
        let values: [[UInt8]] = (0..<8).map { [UInt8($0)] }
        for value in values { _ = try await PeripheralRoleTests.call(d, .updateValue(level, value)) }
        // (A generous bound: in the whole suite the two cooperative threads are shared by hundreds of tasks.)
        try await eventually("every update reached the central", within: .seconds(120)) { await fake.received(root, level).count == values.count }
        #expect(await fake.received(root, level) == values)
    }
}
