import BenchSupport
import BlueZ
import BlueZFake
import DBus
import Foundation
import Logging
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
@testable import RelinkStore
import Testing

/// Durable transfers (issue 22 item 6) against the fake bluetoothd: chunks
/// of the link's largest single-packet value, each sent once the one before
/// is confirmed, and what a link drop or a restart does to a transfer
/// with and without `resume`.
@Suite("Daemon in-process: durable transfers")
struct TransferTests {
    typealias T = RestoreCycleTests
    typealias W = WriteStreamTests
    static let caller = APICaller(name: ":1.7", uid: 0)
    /// 1000 bytes that repeat nowhere: a chunk sent twice is seen as such.
    static let data: [UInt8] = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 256) }
    /// The band's MTU is 100: chunks of 97 bytes.
    static let chunk = 97

    static func start(_ d: InProcessDaemon, withResponse: Bool = true, resume: Bool = false, chunkSize: Int? = nil,
                      data: [UInt8] = data, key: CharacteristicKey = W.key) async throws(RelinkError) -> TransferID {
        let reply = await d.daemon.submit(.transfer(T.id, .start(.address(T.band), key, data: data, withResponse: withResponse,
                                                                 resume: resume, chunkSize: chunkSize)), from: caller)
        guard case .string(let text)? = try reply.get().values.first, let id = try? TransferID(parsing: text) else {
            throw RelinkError(.failed, "no transfer identifier in \(reply)")
        }
        return id
    }

    static func linkedBand(clock: DaemonClock = .continuous, directory: String? = nil, fake: FakeBlueZ? = nil) async throws -> InProcessDaemon {
        let fake = fake ?? FakeBlueZ()
        if directory == nil { await fake.add(W.band(mtu: 100, acquire: false), known: true) }
        let d = try await InProcessDaemon(fake: fake, directory: try directory ?? InProcessDaemon.temporaryDirectory(), clock: clock)
        if directory == nil { try await T.linked(d) }
        return d
    }

    static func transferEvents(_ d: InProcessDaemon) async throws -> [TransferEvent] {
        try await d.events(T.id).compactMap { if case .transfer(let event)? = $0.payload { event } else { nil } }
    }

    static func requests(_ fake: FakeBlueZ) async -> [[UInt8]] {
        await fake.takeRequests(T.band, service: T.heartRate, characteristic: W.control)
    }

    @Test func chunksOfTheLargestSizeEachSentOnceThePreviousIsConfirmedArriveWholeInOrder() async throws {
        let d = try await Self.linkedBand(clock: .manual())  // no time passes: no progress event
        await d.fake.holdWrites(after: 2)
        let transfer = try await Self.start(d)
        try await eventually("the third chunk waits for its answer") { await d.fake.heldWrites == 1 }
        let waiting = try #require(await d.daemon.writeStreams.transfers.running[transfer])
        #expect(waiting.inFlight && waiting.record.confirmed == 2 * Self.chunk, "the next chunk waits for the confirmation")
        var received = await Self.requests(d.fake)
        #expect(received.map(\.count) == [Self.chunk, Self.chunk])
        await d.fake.releaseWrites()
        try await eventually("transfer-completed") { try await Self.transferEvents(d).contains { if case .completed = $0 { true } else { false } } }
        received += await Self.requests(d.fake)
        #expect(received.flatMap { $0 } == Self.data, "every byte once, in order")
        #expect(received.dropLast().allSatisfy { $0.count == Self.chunk } && received.count == 11)
        #expect(try await Self.transferEvents(d) == [.completed(TransferStatus(transfer: transfer, peripheral: waiting.record.peripheral,
                                                                                  characteristic: W.key, offset: 1000, length: 1000))])
        #expect(await d.daemon.writeStreams.transfers.running.isEmpty)
        #expect(try await d.store.loadState().transfers.isEmpty, "an ended transfer leaves the store")
        await d.stop()
    }

    @Test func withoutResponseEachCommandIsSentWhenBlueZTookTheOneBefore() async throws {
        let d = try await Self.linkedBand()
        _ = try await Self.start(d, withResponse: false, chunkSize: 50)
        try await eventually("transfer-completed") { try await Self.transferEvents(d).contains { if case .completed = $0 { true } else { false } } }
        let received = await d.fake.takeWrites(T.band, service: T.heartRate, characteristic: W.control)
        #expect(received.flatMap { $0 } == Self.data && received.count == 20, "chunks of the size asked for, in order")
        #expect(await Self.requests(d.fake).isEmpty)
        await d.stop()
    }

    @Test func progressEventsComeAtMostOncePerIntervalAndNoneForTheLastChunk() async throws {
        let clock = DaemonClock.manual()
        let d = try await Self.linkedBand(clock: clock)
        await d.fake.holdWrites(after: 2)
        let transfer = try await Self.start(d)
        try await eventually("the third chunk waits") { await d.fake.heldWrites == 1 }
        clock.advance(by: Daemon.transferProgressInterval)
        await d.fake.releaseWrites()
        try await eventually("transfer-completed") { try await Self.transferEvents(d).contains { if case .completed = $0 { true } else { false } } }
        let events = try await Self.transferEvents(d)
        #expect(events.map(\.status.offset) == [3 * Self.chunk, 1000] && events.allSatisfy { $0.status.transfer == transfer })
        if case .progress? = events.first {} else { Issue.record("not a progress event first: \(events)") }
        await d.stop()
    }

    @Test func afterALinkDropAResumingTransferGoesOnFromTheLastConfirmedChunk() async throws {
        let d = try await Self.linkedBand()
        await d.fake.holdWrites(after: 3)
        let transfer = try await Self.start(d, resume: true)
        try await eventually("the fourth chunk waits") { await d.fake.heldWrites == 1 }
        await d.fake.setInRange(T.band, false)
        await d.fake.releaseWrites()  // the chunk in flight fails: no link
        try await eventually("the transfer waits for the link") {
            await d.daemon.writeStreams.transfers.running[transfer].map { !$0.inFlight } ?? false
        }
        let listed = try await d.daemon.submit(.transfer(T.id, .list), from: Self.caller).get().values
        #expect("\(listed)".contains("waiting-for-link") && "\(listed)".contains("\(3 * Self.chunk)"), "\(listed)")
        await d.fake.setInRange(T.band, true)
        try await eventually("transfer-completed after the reconnection", within: .seconds(30)) {
            try await Self.transferEvents(d).contains { if case .completed = $0 { true } else { false } }
        }
        let received = await Self.requests(d.fake)
        #expect(received.flatMap { $0 } == Self.data, "from the last confirmed chunk on, nothing lost or doubled")
        #expect(try await Self.transferEvents(d).allSatisfy { if case .failed = $0 { false } else { true } })
        await d.stop()
    }

    @Test func onASlowDiskTheTransferRunsAtMostTheWindowAheadOfItsStoredOffset() async throws {
        let d = try await Self.linkedBand()
        let data = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 256) }
        // The first chunk waits at BlueZ until the disk is slow: otherwise a
        // loaded machine may let the whole transfer end before the stall.
        await d.fake.holdWrites(after: 0)
        let transfer = try await Self.start(d, resume: true, data: data)
        try await eventually("the first chunk waits") { await d.fake.heldWrites == 1 }
        let release = d.store.stallWritesForTesting()
        await d.fake.releaseWrites()
        // About 85 chunks first, each a few task hops: a generous bound, as
        // in the whole suite the two cooperative threads are shared by hundreds of tasks.
        try await eventually("the transfer waits for its offset's commit", within: .seconds(120)) {
            guard let t = await d.daemon.writeStreams.transfers.running[transfer] else { return false }
            return !t.inFlight && t.record.confirmed > Daemon.transferUnstoredWindow
        }
        let received = await Self.requests(d.fake).flatMap { $0 }
        #expect(received.count <= Daemon.transferUnstoredWindow + 2 * Self.chunk && received.count < data.count,
                "at most the window beyond the stored offset while the disk is slow: \(received.count) bytes")
        release()
        try await eventually("transfer-completed", within: .seconds(120)) { try await Self.transferEvents(d).contains { if case .completed = $0 { true } else { false } } }
        #expect(received + (await Self.requests(d.fake).flatMap { $0 }) == data)
        await d.stop()
    }

    @Test func withoutResumeALinkDropFailsTheTransferNamingTheOffsetReached() async throws {
        let d = try await Self.linkedBand()
        await d.fake.holdWrites(after: 3)
        let transfer = try await Self.start(d)
        try await eventually("the fourth chunk waits") { await d.fake.heldWrites == 1 }
        await d.fake.setInRange(T.band, false)
        await d.fake.releaseWrites()
        try await eventually("transfer-failed") { try await Self.transferEvents(d).contains { if case .failed = $0 { true } else { false } } }
        guard case .failed(let status, let reason)? = try await Self.transferEvents(d).last else { Issue.record("no failure"); return }
        #expect(status.transfer == transfer && status.offset == 3 * Self.chunk && status.length == 1000)
        #expect(reason.errorName == RelinkErrorName.linkLost.rawValue && reason.message.contains("\(3 * Self.chunk)"), "\(reason)")
        try await eventually("the row left the store") { try await d.store.loadState().transfers.isEmpty }
        await d.stop()
    }

    @Test func afterARestartAResumingTransferGoesOnFromItsStoredOffset() async throws {
        let first = try await Self.linkedBand()
        let directory = first.directory, fake = first.fake
        await fake.holdWrites(after: 4)
        let transfer = try await Self.start(first, resume: true)
        try await eventually("the fifth chunk waits") { await fake.heldWrites == 1 }
        await first.stop()  // the held chunk reaches the peripheral; relinkd never sees its answer
        let probe = try RelinkStore(directory: directory, logger: Logger(label: "probe"))
        let stored = try #require(try await probe.loadState().transfers.first)
        try probe.close()
        await fake.releaseWrites()  // the peripheral answers again
        #expect(stored.id == transfer && stored.confirmed == 4 * Self.chunk, "the confirmed offset was stored: \(stored.confirmed)")
        let second = try await Self.linkedBand(directory: directory, fake: fake)
        try await eventually("transfer-completed after the restart") {
            try await Self.transferEvents(second).contains { if case .completed = $0 { true } else { false } }
        }
        let received = await Self.requests(fake)
        let twice = try #require(TransferLog.duplicates(in: received, of: Self.data), "the data in order, a chunk at most sent again")
        #expect(twice == Self.chunk, "the chunk unconfirmed at the stop is sent again: \(twice) bytes")
        await second.stop()
    }

    @Test func afterARestartATransferWithoutResumeFailsWithInterruptedNamingItsOffset() async throws {
        let first = try await Self.linkedBand()
        let directory = first.directory, fake = first.fake
        await fake.holdWrites(after: 2)
        let transfer = try await Self.start(first)
        try await eventually("the third chunk waits") { await fake.heldWrites == 1 }
        await first.stop()
        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("transfer-failed") { try await Self.transferEvents(second).contains { if case .failed = $0 { true } else { false } } }
        guard case .failed(let status, let reason)? = try await Self.transferEvents(second).last else { Issue.record("no failure"); return }
        #expect(status.transfer == transfer && status.offset == 2 * Self.chunk, "\(status)")
        #expect(reason.errorName == RelinkErrorName.interrupted.rawValue && reason.message.contains("\(2 * Self.chunk)"), "\(reason)")
        try await eventually("the row left the store") { try await second.store.loadState().transfers.isEmpty }
        await second.stop()
    }

    @Test func cancellingEndsTheTransferWithCancelledAndNothingMoreIsSent() async throws {
        let d = try await Self.linkedBand()
        await d.fake.holdWrites(after: 1)
        let transfer = try await Self.start(d)
        try await eventually("the second chunk waits") { await d.fake.heldWrites == 1 }
        _ = try await d.daemon.submit(.transfer(T.id, .cancel(transfer)), from: Self.caller).get()
        guard case .failed(let status, let reason)? = try await Self.transferEvents(d).last else { Issue.record("no failure"); return }
        #expect(status.offset == Self.chunk && reason.errorName == RelinkErrorName.cancelled.rawValue)
        await d.fake.releaseWrites()
        try await eventually("the held chunk went") { await d.fake.heldWrites == 0 }
        #expect(await Self.requests(d.fake).count <= 2, "no chunk after the one in flight")
        let again = await d.daemon.submit(.transfer(T.id, .cancel(transfer)), from: Self.caller)
        #expect((try? again.get()) == nil && { if case .failure(let e) = again { e.code == .unknownTransfer } else { false } }())
        await d.stop()
    }

    @Test func badInputIsRefusedWithTypedErrors() async throws {
        let d = try await Self.linkedBand()
        func refusal(_ request: TransferRequest, id: RestoreIdentifier = T.id) async -> RelinkErrorName? {
            if case .failure(let error) = await d.daemon.submit(.transfer(id, request), from: Self.caller) { return error.code }
            return nil
        }
        let start = { (key: CharacteristicKey, data: [UInt8], withResponse: Bool, chunk: Int?) in
            TransferRequest.start(.address(T.band), key, data: data, withResponse: withResponse, resume: false, chunkSize: chunk)
        }
        let other = try RestoreIdentifier("nobody")
        #expect(await refusal(start(W.key, Self.data, true, nil), id: other) == .unknownIdentifier)
        #expect(await refusal(.start(.address(T.address(9)), W.key, data: Self.data, withResponse: true, resume: false, chunkSize: nil)) == .unknownPeripheral)
        let missing = CharacteristicKey(service: T.heartRate, characteristic: BluetoothUUID(shortValue: 0x2A99))
        #expect(await refusal(start(missing, Self.data, true, nil)) == .unknownCharacteristic)
        #expect(await refusal(start(T.key, Self.data, true, nil)) == .notSupported, "the measurement only notifies")
        #expect(await refusal(start(W.key, [], true, nil)) == .invalidArguments)
        #expect(await refusal(start(W.key, [UInt8](repeating: 1, count: TransferRecord.maximumLength + 1), true, nil)) == .invalidArguments)
        #expect(await refusal(start(W.key, Self.data, false, 98)) == .valueTooLong, "over MTU - 3 without response")
        await d.fake.holdWrites(after: 0)
        _ = try await Self.start(d)
        #expect(await refusal(start(W.key, Self.data, true, nil)) == .inProgress, "one transfer per characteristic")
        #expect(await refusal(.cancel(TransferID())) == .unknownTransfer)
        await d.fake.releaseWrites()
        await d.stop()
    }
}
