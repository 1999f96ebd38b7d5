import BlueZ
import BlueZFake
import Foundation
@testable import RelinkDaemon
import RelinkModel
import Testing

/// A program that leaves the bus while its centrals wait for answers: seen
/// on the bench, a central's write made as its program closed was handed
/// to the gone program and got ATT 0x0E after relinkd's 10 s bound.
/// relinkd now answers such requests at once, as with no program attached.
@Suite("Daemon in-process: requests of a program that left")
struct ProgramGoneTests {
    typealias P = PeripheralRoleTests

    @Test func aGoneProgramsWriteIsStoredAndAcceptedAndItsReadAnsweredAtOnce() async throws {
        let fake = FakeBlueZ()
        let clock = DaemonClock.manual()  // never moved: the 10 s bound cannot be what answers
        let d = try await P.published(fake, clock: clock)
        defer { Task { await d.stop() } }
        let write = Task { await fake.remoteWrite(P.root, P.control, [7, 7], central: "AA:BB:CC:DD:EE:03") }
        let first = try await P.waitingRequest(d)
        let read = Task { await fake.remoteRead(P.root, P.live) }
        _ = try await P.waitingRequest(d, after: first)
        #expect(await d.daemon.peripheralRole.pending.count == 2)

        await d.daemon.clientLeft(P.caller.name)  // the program's connection closed
        try await eventually("both answered without the program") { await d.daemon.peripheralRole.pending.count == 0 }

        #expect(await write.value == .done, "the write is accepted once stored")
        #expect(await read.value == .error(.unlikelyError), "an uncached dynamic value, as with no program")
        #expect(await d.daemon.peripheralRole.pending.count == 0)
        // The write-request stays in the outbox for the program's return.
        let events = try await P.pmEvents(d)
        #expect(events.contains { if case .writeRequest(_, _, _, _, let value, _, _) = $0 { value == [7, 7] } else { false } })
    }
}
