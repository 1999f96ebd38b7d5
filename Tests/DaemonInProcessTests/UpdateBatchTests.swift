import BlueZ
import BlueZFake
import DBus
import Foundation
@testable import RelinkDaemon
import RelinkAPI
import RelinkModel
import Testing

/// Issue 23 item 4: `UpdateValues` carries several updates in one call;
/// relinkd takes them in order while its update window has room, and the
/// central gets each once, in order.
@Suite("Daemon in-process: UpdateValues")
struct UpdateBatchTests {
    typealias P = PeripheralRoleTests

    static func state(_ d: InProcessDaemon) async throws -> PeripheralManagerRecord {
        guard case .string(let json)? = try await P.call(d, .state).first else { throw RelinkError(.failed, "no state") }
        return try PeripheralManagerRecord(json: json)
    }

    static func accepted(_ values: [DBusValue]) -> Int? {
        if case .uint32(let n)? = values.first { Int(n) } else { nil }
    }

    @Test func aBatchIsTakenInOrderWhileItFitsAndEachValueReachesTheCentralOnce() async throws {
        let fake = FakeBlueZ()
        let d = try await P.published(fake)
        defer { Task { await d.stop() } }
        #expect(await fake.remoteSubscribe(P.root, P.level) == .done)
        // bluetoothd is slow with the first value: the window (16) fills.
        await fake.holdFirstNotification()
        let first: [[UInt8]] = (0..<10).map { [UInt8($0)] }, second: [[UInt8]] = (10..<20).map { [UInt8($0)] }
        #expect(Self.accepted(try await P.call(d, .updateValues(P.level, first))) == 10)
        let taken = try #require(Self.accepted(try await P.call(d, .updateValues(P.level, second))))
        #expect((6...10).contains(taken), "at most the window's 16 on their way: \(taken)")
        let sent = first + second.prefix(taken)
        try await eventually("the taken values reached the central", within: .seconds(120)) { await fake.received(P.root, P.level).count == sent.count }
        #expect(await fake.received(P.root, P.level) == sent)
        if taken < second.count {
            try await eventually("ready-to-update after the refusal") { try await P.pmEvents(d).contains(.readyToUpdate) }
        }
        #expect(try await Self.state(d).cachedValues[P.level] == sent.last, "the level is cacheable: its last value is kept")
    }

    @Test func aBadBatchIsRefusedWholeAndNothingIsSent() async throws {
        let fake = FakeBlueZ()
        let d = try await P.published(fake)
        defer { Task { await d.stop() } }
        #expect(await fake.remoteSubscribe(P.root, P.level) == .done)
        await #expect(throws: RelinkError.self) { try await P.call(d, .updateValues(P.model, [[1]])) }   // a static value: no notify
        #expect(await fake.received(P.root, P.level).isEmpty)
        #expect(try await Self.state(d).cachedValues[P.level] == nil)
    }
}
