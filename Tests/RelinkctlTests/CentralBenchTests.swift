import BenchSupport
import Foundation
import RelinkClient
import Restoration
import Synchronization
import Testing

/// RelinkCentral against relinkd on the bench: restored state first, then
/// events in order, each once; what was not acknowledged comes back to the
/// next central of the identifier.
@Suite(.serialized) struct CentralBenchTests {
    static let id = "org.example.lock"

    @Test(.timeLimit(.minutes(2))) func restoredStateFirstThenEventsInOrderAndReplayOfUnacknowledged() async throws {
        try await CtlHarness.with { h in
            let bus = RelinkBus.address(h.bus)
            let (first, state) = try await RelinkCentral.register(restoreIdentifier: Self.id, bus: bus)
            #expect(state.isNew)
            #expect(state.peripherals.isEmpty && state.lastSequence == 0)
            let uuid = try await first.connect(peripheral: CtlHarness.lockAddress, options: .init(services: [CtlHarness.lockService]))
            try await first.subscribe(peripheral: CtlHarness.lockAddress, service: CtlHarness.lockService, characteristic: CtlHarness.lockState)
            await #expect(throws: RelinkClientError.self) {
                try await first.subscribe(peripheral: CtlHarness.lockAddress, service: "nope", characteristic: CtlHarness.lockState)
            }

            var events = first.events.makeAsyncIterator()
            // Wait for the link, then push three values.
            var seen: [RelinkClientEvent] = []
            while !seen.contains(where: { $0.kind == .connected }) {
                guard let e = await events.next() else { Issue.record("stream ended"); return }
                seen.append(e)
            }
            let connected = try #require(seen.last)
            #expect(connected.peripheral?.uuid.uuidString == uuid)
            // Values count once the lock's notifications are armed: a probe
            // is pushed until it arrives (the prober has ended, so no probe
            // comes after the values).
            let probe: UInt8 = 0x7f
            let prober = h.prober(probe)
            while !seen.contains(where: { $0.value == [probe] }) {
                guard let e = await events.next() else { Issue.record("stream ended"); return }
                seen.append(e)
            }
            prober.cancel()
            await prober.value
            for value: UInt8 in [1, 2, 3] { try await h.push(value) }
            while seen.filter({ $0.value != nil && $0.value != Array("locked".utf8) && $0.value != [probe] }).count < 3 {
                guard let e = await events.next() else { Issue.record("stream ended"); return }
                seen.append(e)
            }
            let sequences = seen.map(\.sequence)
            #expect(sequences == Array(sequences[0]...(sequences[0] + UInt64(sequences.count - 1))), "no gap, no repeat: \(sequences)")
            #expect(seen.compactMap(\.value).filter { $0.count == 1 && $0 != [probe] } == [[1], [2], [3]])

            // Acknowledge up to the connection only, then go away.
            try await first.acknowledge(through: connected.sequence)
            await first.close()

            // A new central of the identifier: restored state first ...
            let second = RelinkCentral(restoreIdentifier: Self.id, bus: bus)
            let restored = try await second.connect()
            #expect(!restored.isNew)
            #expect(restored.acknowledged == connected.sequence)
            #expect(restored.lastSequence >= sequences.last ?? 0)
            let lock = try #require(restored.peripherals.first)
            #expect(lock.id.uppercased() == uuid && lock.address == CtlHarness.lockAddress && lock.state == "connected")
            #expect(lock.subscriptions == [.init(service: CtlHarness.lockService, characteristic: CtlHarness.lockState)])
            // ... then every unacknowledged event, in order, once, then live ones.
            var replay = second.events.makeAsyncIterator()
            var again: [RelinkClientEvent] = []
            let expected = seen.filter { $0.sequence > connected.sequence }
            while again.count < expected.count {
                guard let e = await replay.next() else { Issue.record("stream ended"); return }
                again.append(e)
            }
            #expect(again == expected)
            try await h.push(4)
            let live = await replay.next()
            #expect(live?.value == [4])
            #expect(live?.sequence == (again.last?.sequence ?? 0) + 1)
            try await second.acknowledge(through: live?.sequence ?? 0)
            #expect(try await second.properties().acknowledged == live?.sequence)
            await #expect(throws: RelinkClientError.self) { try await second.acknowledge(through: 1_000_000) }
            await second.close()
        }
    }

    @Test(.timeLimit(.minutes(1))) func eventsFinishWhenRelinkdLeavesAndErrorsAreTyped() async throws {
        try await CtlHarness.with { h in
            let (central, _) = try await RelinkCentral.register(restoreIdentifier: Self.id, bus: .address(h.bus), reattach: false)
            do throws(RelinkClientError) {
                _ = try await central.read(peripheral: "6b1f2c3d-0000-4abc-8def-0123456789ab", service: "180d", characteristic: "2a37")
                Issue.record("read of an unknown peripheral succeeded")
            } catch {
                #expect(error.name == .unknownPeripheral || error.name == .notConnected, "\(error)")
            }
            do throws(RelinkClientError) {
                try await central.connect(peripheral: "lock")
                Issue.record("connect to 'lock' succeeded")
            } catch {
                #expect(error.name == .invalidArguments)
            }
            h.killRelinkd()
            var it = central.events.makeAsyncIterator()
            let end = await it.next()
            #expect(end == nil)
            do throws(RelinkClientError) {
                try await central.stopScan()
                Issue.record("stopScan without relinkd succeeded")
            } catch {
                #expect(error.isUnreachable, "\(error)")
            }
        }
    }

    @Test(.timeLimit(.minutes(1))) func writeLimitsAndAStreamWhoseWriterIsRefusedThenWaitsForReady() async throws {
        try await CtlHarness.with { h in
            let (central, _) = try await RelinkCentral.register(restoreIdentifier: Self.id, bus: .address(h.bus), reattach: false)
            let uuid = try await central.connect(peripheral: CtlHarness.lockAddress, options: .init(services: [CtlHarness.lockService]))
            var events = central.events.makeAsyncIterator()
            var connected: RelinkClientEvent?
            while connected == nil {
                guard let e = await events.next() else { Issue.record("stream ended"); return }
                if e.kind == .connected { connected = e }
            }
            // The sizes: in the connected event and on the peripheral alike.
            let limits = try #require(connected?.writeLimits, "connected carries the write limits: \(connected?.payloadJSON ?? "")")
            let manager = try await RelinkManager.connect(to: .address(h.bus))
            defer { manager.close() }
            let peripheral = try await manager.peripheral(uuid)
            #expect(peripheral.maximumWriteValueLength(for: .withoutResponse) == limits.withoutResponse)
            #expect(peripheral.maximumWriteValueLength(for: .withResponse) == 512)

            let stream = try await central.openWriteStream(peripheral: uuid, service: CtlHarness.lockService, characteristic: CtlHarness.lockCommand)
            #expect(stream.maximumLength == limits.withoutResponse && stream.canSendWriteWithoutResponse)
            let before = try await h.bench.get("lock")["writes"]?.intValue ?? 0
            // A writer that ignores back-pressure is refused, typed, soon.
            var accepted = 0
            var refusal: RelinkClientError?
            while refusal == nil, accepted < 500 {
                do throws(RelinkClientError) {
                    try await stream.write(Array("lock".utf8))
                    accepted += 1
                } catch {
                    refusal = error
                }
            }
            #expect(refusal?.name == .writeQueueFull, "\(String(describing: refusal)) after \(accepted) writes")
            // Not asserted here: that the refusal made canSendWriteWithoutResponse
            // false. relinkd's ReadyToWrite may already have come by now on
            // a loaded machine (then it is rightly true again):
            // WriteStreamGateTests has the rule.
            await stream.waitUntilReady()
            #expect(stream.canSendWriteWithoutResponse, "ReadyToWrite came")
            // One that waits loses nothing.
            for _ in 0..<40 { try await stream.writeWhenReady(Array("unlock".utf8)) }
            accepted += 40
            try await stream.close()
            try await eventually(timeout: .seconds(20), "the lock received every accepted value") {
                (try await h.bench.get("lock")["writes"]?.intValue ?? 0) >= before + accepted
            }
            #expect(try await h.bench.get("lock")["writes"]?.intValue == before + accepted)
            do throws(RelinkClientError) {
                try await stream.write(Array("lock".utf8))
                Issue.record("a write after Close succeeded")
            } catch {
                #expect(error.name == .unknownIdentifier && error.message.contains("write stream"), "\(error)")
            }
        }
    }

    @Test(.timeLimit(.minutes(2))) func reattachesAfterRelinkdIsKilledAndGoesOnWithTheStream() async throws {
        try await CtlHarness.with { h in
            let (central, _) = try await RelinkCentral.register(restoreIdentifier: Self.id, bus: .address(h.bus))
            try await central.connect(peripheral: CtlHarness.lockAddress, options: .init(services: [CtlHarness.lockService]))
            try await central.subscribe(peripheral: CtlHarness.lockAddress, service: CtlHarness.lockService, characteristic: CtlHarness.lockState)
            var events = central.events.makeAsyncIterator()
            var seen: [RelinkClientEvent] = []
            while !seen.contains(where: { $0.kind == .connected }) {
                guard let e = await events.next() else { Issue.record("stream ended"); return }
                seen.append(e)
            }
            // relinkd dies and comes back; the central registers again by itself.
            h.killRelinkd()
            try await h.startRelinkd()
            try await eventually(timeout: .seconds(20), "the central to register again") { await central.reattachments == 1 }
            let restored = try #require(await central.restoredState)
            #expect(!restored.isNew)
            #expect(restored.peripherals.first?.subscriptions == [.init(service: CtlHarness.lockService, characteristic: CtlHarness.lockState)])
            // The link comes back (restored or connected), then values flow
            // on the same stream: probes are pushed until one arrives.
            // A probe not seen within 500 ms (sent before the re-arm) is
            // given up for the next one.
            let bench = h.bench
            let probeArrived = Mutex(false)
            let pusher = Task {
                for probe in UInt8(100)...UInt8(199) {
                    _ = try? await bench.send(.pushValue("lock", hex: String(format: "%02x", probe)))
                    if (try? await eventually(timeout: .milliseconds(500), "probe \(probe) at the central") { probeArrived.withLock { $0 } }) != nil { return }
                }
            }
            defer { pusher.cancel() }
            while let e = await events.next() {
                seen.append(e)
                if let v = e.value, v.count == 1, v[0] >= 100 { probeArrived.withLock { $0 = true }; break }
            }
            pusher.cancel()
            let sequences = seen.map(\.sequence)
            #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count, "in order, once: \(sequences)")
            #expect(seen.contains { $0.value.map { $0.count == 1 && $0[0] >= 100 } == true })
            await central.close()
        }
    }

    /// From the bench's push to the value in a RelinkCentral's `events`, for
    /// 20 values: each arrives once, in order; the figures are printed
    /// (not asserted: they measure the machine's load as much as relink).
    @Test(.timeLimit(.minutes(2))) func valueLatencyFigure() async throws {
        try await CtlHarness.with { h in
            let (central, _) = try await RelinkCentral.register(restoreIdentifier: Self.id, bus: .address(h.bus))
            try await central.connect(peripheral: CtlHarness.lockAddress, options: .init(services: [CtlHarness.lockService]))
            try await central.subscribe(peripheral: CtlHarness.lockAddress, service: CtlHarness.lockService, characteristic: CtlHarness.lockState)
            var events = central.events.makeAsyncIterator()
            while let e = await events.next(), e.kind != .connected {}
            // Measure once the lock's notifications are armed: a probe is
            // pushed until it arrives.
            let prober = h.prober(0x7f)
            while let e = await events.next(), e.value != [0x7f] {}
            prober.cancel()
            await prober.value
            var latencies: [Duration] = []
            var last: UInt64 = 0
            for value in UInt8(1)...UInt8(20) {
                let start = ContinuousClock.now
                try await h.push(value)
                while let e = await events.next() {
                    #expect(e.sequence > last)
                    last = e.sequence
                    if e.value == [value] { break }
                }
                latencies.append(ContinuousClock.now - start)
                try await central.acknowledge(through: last)
            }
            let sorted = latencies.sorted()
            print("RelinkCentral value latency (bench push to event, incl. the bench command round trip): median \(sorted[sorted.count / 2]), max \(sorted[sorted.count - 1])")
            #expect(latencies.count == 20)
            await central.close()
        }
    }
}
