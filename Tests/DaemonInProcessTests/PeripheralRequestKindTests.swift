import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// Issue 23: a request event says the central's ATT MTU (bluetoothd's
/// `mtu` option) and a write-request the write's kind (`command`,
/// `request`, `reliable`), with a program attached and while it is away.
@Suite("Daemon in-process: request events' MTU and write kinds")
struct PeripheralRequestKindTests {
    typealias P = PeripheralRoleTests

    @Test func withAProgramReadsAndEachWriteKindCarryTheMTU() async throws {
        let fake = FakeBlueZ()
        let d = try await P.published(fake)
        defer { Task { await d.stop() } }

        let read = Task { await fake.remoteRead(P.root, P.level, central: "AA:BB:CC:DD:EE:01", mtu: 185) }
        let readNumber = try await P.waitingRequest(d)
        #expect(try await P.pmEvents(d).last
            == .readRequest(request: readNumber, central: "AA:BB:CC:DD:EE:01", characteristic: P.level, offset: 0, mtu: 185))
        _ = try await P.call(d, .respond(readNumber, [1]))
        #expect(await read.value == .value([1]))

        // A write request and a part of a reliable write wait for the program.
        var previous = readNumber
        for (kind, offset) in [(WriteKind.request, 0), (.reliable, 18)] {
            let write = Task { await fake.remoteWrite(P.root, P.control, [2], offset: offset, kind: kind, central: "AA:BB:CC:DD:EE:01", mtu: 23) }
            let number = try await P.waitingRequest(d, after: previous)
            #expect(try await P.pmEvents(d).last
                == .writeRequest(request: number, central: "AA:BB:CC:DD:EE:01", characteristic: P.control, offset: offset, value: [2], kind: kind, mtu: 23))
            _ = try await P.call(d, .respond(number, []))
            #expect(await write.value == .done)
            previous = number
        }

        // A command is answered at once; its event has no request to answer.
        #expect(await fake.remoteWrite(P.root, P.control, [3], kind: .command, central: "AA:BB:CC:DD:EE:01", mtu: 23) == .done)
        try await eventually("the command's event") {
            try await P.pmEvents(d).last
                == .writeRequest(request: 0, central: "AA:BB:CC:DD:EE:01", characteristic: P.control, offset: 0, value: [3], kind: .command, mtu: 23)
        }
    }

    /// While the program is away every kind is stored, then accepted: the
    /// program reads each, with its kind and MTU, when it comes back.
    @Test func whileTheProgramIsAwayEachKindIsStoredThenAccepted() async throws {
        let fake = FakeBlueZ()
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await P.published(fake, directory: directory)
        await first.stop()
        let d = try await InProcessDaemon(fake: fake, directory: directory)
        defer { Task { await d.stop() } }
        for (n, kind) in WriteKind.allCases.enumerated() {
            #expect(await fake.remoteWrite(P.root, P.control, [UInt8(n)], offset: n, kind: kind, central: "AA:BB:CC:DD:EE:02", mtu: 247) == .done)
        }
        let writes = try await P.pmEvents(d).filter { if case .writeRequest = $0 { true } else { false } }
        #expect(writes == WriteKind.allCases.enumerated().map { n, kind in
            .writeRequest(request: 0, central: "AA:BB:CC:DD:EE:02", characteristic: P.control, offset: n, value: [UInt8(n)], kind: kind, mtu: 247)
        })
    }
}
