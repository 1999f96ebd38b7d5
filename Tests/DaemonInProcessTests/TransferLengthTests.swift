import BlueZ
import BlueZFake
@testable import RelinkDaemon
import RelinkModel
import Testing

/// Real bluetoothd 5.66 on the VM bench: a transfer with response in chunks
/// of the link's largest value (512 bytes at MTU 517) failed at its first
/// chunk, the peripheral refusing more than 510 bytes (ATT 0x0D, reported
/// as `InvalidArguments: Invalid Length`). A transfer now sends smaller
/// chunks after such a refusal and goes on.
@Suite("Daemon in-process: a transfer whose chunks the peripheral finds too long")
struct TransferLengthTests {
    typealias X = TransferTests

    @Test func aRefusedLengthMakesTheChunksSmallerAndTheTransferCompletes() async throws {
        let d = try await X.linkedBand()
        await d.fake.refuseWrites(longerThan: X.chunk - 5)
        _ = try await X.start(d)
        try await eventually("transfer-completed") {
            try await X.transferEvents(d).contains { if case .completed = $0 { true } else { false } }
        }
        let received = await X.requests(d.fake)
        #expect(received.flatMap { $0 } == X.data, "whole and in order, nothing doubled")
        #expect(received.allSatisfy { $0.count <= X.chunk - 5 }, "\(received.map(\.count))")
        #expect(try await X.transferEvents(d).allSatisfy { if case .failed = $0 { false } else { true } })
        await d.stop()
    }

    @Test func aPeripheralThatRefusesEveryLengthFailsTheTransferNamingTheOffset() async throws {
        let d = try await X.linkedBand()
        await d.fake.refuseWrites(longerThan: 10)  // under the smallest chunk relinkd tries
        _ = try await X.start(d)
        try await eventually("transfer-failed") {
            try await X.transferEvents(d).contains { if case .failed = $0 { true } else { false } }
        }
        guard case .failed(let status, let reason)? = try await X.transferEvents(d).last else { Issue.record("no failure"); return }
        #expect(status.offset == 0)
        #expect(reason.errorName == "org.bluez.Error.InvalidArguments", "\(reason)")
        await d.stop()
    }
}
