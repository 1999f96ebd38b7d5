import BenchSupport
import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Synchronization
import Testing

/// Writes without response with back-pressure, and the largest value per
/// write type (issue 22 item 5), against the fake's `AcquireWrite` socket
/// (whose peripheral end reads only when the test takes the values: a
/// peripheral slower than its writer).
@Suite("Daemon in-process: write limits and streams of writes without response")
struct WriteStreamTests {
    typealias T = RestoreCycleTests
    /// A characteristic that takes writes without response (and with).
    static let control = BluetoothUUID(shortValue: 0x2A39)
    static let key = CharacteristicKey(service: T.heartRate, characteristic: control)

    static func band(mtu: Int = 100, acquire: Bool = true) -> FakePeripheral {
        var control = FakeCharacteristic(uuid: control, flags: ["write", "write-without-response"])
        control.offersAcquireWrite = acquire
        var band = FakePeripheral(address: T.band, advertisedName: "HRM-2C41", gapName: "Wrist Band", services: [
            FakeService(uuid: T.heartRate, characteristics: [FakeCharacteristic(uuid: T.measurement, flags: ["notify"]), control]),
        ])
        band.mtu = mtu
        return band
    }

    /// Counts `ready` calls.
    final class Readiness: Sendable {
        let count = Mutex(0)
        var callback: @Sendable () -> Void { { self.count.withLock { $0 += 1 } } }
        var value: Int { count.withLock { $0 } }
    }

    /// A fake bluetoothd with `band`, and a daemon linked to it (registered,
    /// connected, subscribed, armed).
    static func linked(_ band: FakePeripheral) async throws -> (FakeBlueZ, InProcessDaemon) {
        let fake = FakeBlueZ()
        await fake.add(band, known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await T.linked(d)
        return (fake, d)
    }

    static func open(_ d: InProcessDaemon, _ readiness: Readiness) async throws -> WriteStream {
        let reply = await d.daemon.submit(.locate(T.id, .address(T.band), key), from: APICaller(name: ":1.1", uid: 0))
        guard case .success(let located) = reply, let path = located.characteristic else { throw RelinkError(.failed, "not located: \(reply)") }
        return try await d.daemon.openWriteStream(T.id, key: key, characteristic: path, owner: nil, uid: 0, ready: readiness.callback)
    }

    /// Value `n` of a stream: its number, little-endian, padded to `size`.
    static func value(_ n: Int, size: Int = 20) -> [UInt8] {
        (0..<4).map { UInt8((n >> (8 * $0)) & 0xff) } + [UInt8](repeating: 0xA5, count: size - 4)
    }

    static func number(_ value: [UInt8]) -> Int { (0..<4).reduce(0) { $0 | Int(value[$1]) << (8 * $1) } }

    @Test func theLargestValuePerWriteTypeComesFromTheLinksMTUAndALongerWriteIsRefusedNamingIt() async throws {
        let (fake, d) = try await Self.linked(Self.band(mtu: 100))
        let peripheral = try #require(await d.daemon.peripheralID(for: T.band))
        try await eventually("the link's write limits are known") { await d.daemon.writeStreams.limits[peripheral] != nil }
        let limits = try #require(await d.daemon.writeStreams.limits[peripheral])
        #expect(limits.mtu == 100 && limits.withoutResponse == 97 && limits.withResponse == 512)
        let values = await d.daemon.peripheralValues(peripheral, device: nil)
        #expect(values["MTU"] == .uint16(100) && values["MaximumWriteWithoutResponse"] == .uint16(97) && values["MaximumWriteWithResponse"] == .uint16(512),
                "Peripheral1 shows them")
        let path = try #require(await fake.mirror.characteristic(device: fake.devicePath(T.band), service: T.heartRate.string, characteristic: Self.control.string)).path
        try await d.daemon.checkWriteLength(97, withResponse: false, characteristic: path)
        try await d.daemon.checkWriteLength(512, withResponse: true, characteristic: path)  // a long write
        for (count, withResponse, named) in [(98, false, "97 bytes"), (513, true, "512 bytes")] {
            do {
                try await d.daemon.checkWriteLength(count, withResponse: withResponse, characteristic: path)
                Issue.record("a \(count)-byte write (with response: \(withResponse)) was accepted")
            } catch {
                #expect(error.code == .valueTooLong && error.message.contains(named), "\(error)")
            }
        }
        // A stream refuses the same, naming the size.
        let stream = try await Self.open(d, Readiness())
        #expect(throws: RelinkError.self) { try stream.write(Self.value(0, size: 98)) }
        do { try stream.write(Self.value(0, size: 98)) } catch { #expect(error.code == .valueTooLong && error.message.contains("97 bytes")) }
        try stream.write(Self.value(0, size: 97))
        await d.stop()
    }

    @Test func aWriterThatIgnoresBackPressureIsRefusedAndOneThatWaitsForReadyLosesNothing() async throws {
        let (fake, d) = try await Self.linked(Self.band())
        let readiness = Readiness()
        let stream = try await Self.open(d, readiness)
        #expect(stream.transport == .acquired)
        #expect(await fake.writeAcquired(T.band, service: T.heartRate, characteristic: Self.control))
        // Ignoring back-pressure: the peripheral reads nothing; writes are refused once its socket is full.
        var sent = 0
        var refusal: RelinkError?
        while refusal == nil, sent < 100_000 {
            do { try stream.write(Self.value(sent)); sent += 1 } catch { refusal = error }
        }
        #expect(refusal?.code == .writeQueueFull, "\(String(describing: refusal))")
        #expect(readiness.value == 0)
        // Waiting for ready: the peripheral reads; every refused value is written again after `ready`.
        var received = await fake.takeWrites(T.band, service: T.heartRate, characteristic: Self.control)
        let total = sent + 500
        var refusals = 1
        while sent < total {
            let before = readiness.value
            do {
                try stream.write(Self.value(sent))
                sent += 1
            } catch {
                #expect(error.code == .writeQueueFull, "\(error)")
                refusals += 1
                received += await fake.takeWrites(T.band, service: T.heartRate, characteristic: Self.control)
                try await eventually("ready to write after a refusal") { readiness.value > before }
            }
        }
        try await eventually("every value written reached the peripheral") {
            received += await fake.takeWrites(T.band, service: T.heartRate, characteristic: Self.control)
            return received.count >= total
        }
        #expect(received.map(Self.number) == Array(0..<total), "nothing lost, nothing doubled, in order")
        #expect(refusals > 1, "the socket filled more than once")
        await d.stop()
    }

    @Test func afterALinkDropTheSocketIsAcquiredAgainAndAWriterRefusedMeanwhileIsTold() async throws {
        let (fake, d) = try await Self.linked(Self.band())
        let readiness = Readiness()
        let stream = try await Self.open(d, readiness)
        try stream.write(Self.value(1))
        await fake.setInRange(T.band, false)  // the link drops and stays down
        try await eventually("the stream saw the drop") { stream.limits == nil }
        do {
            try stream.write(Self.value(2))
            Issue.record("a write with no link was accepted")
        } catch {
            #expect(error.code == .notConnected, "\(error)")
        }
        #expect(readiness.value == 0)
        await fake.setInRange(T.band, true)
        try await eventually(timeout: .seconds(30), "relinkd reconnected and acquired a new socket") {
            await d.state(T.id, T.band) == "connected" && stream.hasSocket && readiness.value == 1
        }
        try stream.write(Self.value(3))
        var received: [[UInt8]] = []
        try await eventually("the write after the reconnection arrived") {
            received += await fake.takeWrites(T.band, service: T.heartRate, characteristic: Self.control)
            return received.contains(Self.value(3))
        }
        #expect(received.map(Self.number) == [1, 3] || received.map(Self.number) == [3], "\(received.map(Self.number))")
        await d.stop()
    }

    @Test func withoutAcquireWriteTheStreamUsesWriteValueCommandsInOrder() async throws {
        let (fake, d) = try await Self.linked(Self.band(acquire: false))
        let readiness = Readiness()
        let stream = try await Self.open(d, readiness)
        #expect(stream.transport == .writeCommand)
        var sent = 0
        while sent < 200 {
            let before = readiness.value
            do { try stream.write(Self.value(sent)); sent += 1 } catch {
                #expect(error.code == .writeQueueFull, "\(error)")
                try await eventually("ready after the queue drained a value") { readiness.value > before }
            }
        }
        var received: [[UInt8]] = []
        try await eventually("all 200 values sent as commands") {
            received += await fake.takeWrites(T.band, service: T.heartRate, characteristic: Self.control)
            return received.count >= 200
        }
        #expect(received.map(Self.number) == Array(0..<200))
        await d.stop()
    }

    @Test func aRelinkdRestartEndsTheStreamAndReleasesTheSocketSoANewStreamCanBeOpened() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.band(), known: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        var d = try await InProcessDaemon(fake: fake, directory: directory)
        try await T.linked(d)
        _ = try await Self.open(d, Readiness())
        await d.stop()
        d = try await InProcessDaemon(fake: fake, directory: directory)
        #expect(await d.daemon.writeStreams.streams.isEmpty, "a stream does not outlive relinkd")
        try await eventually("the old socket was closed, so bluetoothd released the characteristic") {
            _ = await fake.takeWrites(T.band, service: T.heartRate, characteristic: Self.control)
            return !(await fake.writeAcquired(T.band, service: T.heartRate, characteristic: Self.control))
        }
        try await eventually("the restored link is up") { await d.state(T.id, T.band) == "connected" }
        let stream = try await Self.open(d, Readiness())
        #expect(stream.hasSocket)
        await d.stop()
    }

    /// The write limits an event carries (`connected` or `restored`).
    static func limits(_ payload: RelinkEvent?) -> WriteLimits? {
        switch payload {
        case .connected(_, _, _, let limits)?, .restored(_, _, _, let limits)?: limits
        default: nil
        }
    }

    @Test func connectedAndRestoredCarryTheLinksWriteLimits() async throws {
        let fake = FakeBlueZ()
        await fake.add(Self.band(mtu: 185), known: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await T.linked(first)
        // The link is up before its event's group commit: wait for the store.
        try await eventually("connected stored") { try await first.events(T.id).contains { $0.kind == "connected" } }
        let connected = try #require(try await first.events(T.id).first { $0.kind == "connected" })
        #expect(Self.limits(connected.payload) == WriteLimits(mtu: 185), "connected: \(String(describing: connected.payload))")
        #expect(Self.limits(connected.payload)?.withoutResponse == 182)
        await first.stop()

        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("restored stored") { try await second.events(T.id).contains { $0.kind == "restored" } }
        let restored = try #require(try await second.events(T.id).first { $0.kind == "restored" })
        #expect(Self.limits(restored.payload) == WriteLimits(mtu: 185), "restored: \(String(describing: restored.payload))")
        await second.stop()
    }

    @Test func aBluetoothdWithoutTheAcquireWriteMethodGetsWriteValueCommands() async throws {
        var band = Self.band()
        band.services[0].characteristics[1].acquireWriteMethodMissing = true  // as BlueZoo: WriteAcquired shown, no method
        let (fake, d) = try await Self.linked(band)
        let stream = try await Self.open(d, Readiness())
        #expect(stream.transport == .writeCommand)
        for n in 0..<3 { try stream.write(Self.value(n)) }
        var received: [[UInt8]] = []
        try await eventually("the peripheral received the three values") {
            received += await fake.takeWrites(T.band, service: T.heartRate, characteristic: Self.control)
            return received.count >= 3
        }
        #expect(received.map(Self.number) == [0, 1, 2])
        await d.stop()
    }

    @Test func closingAWriteCommandStreamStillSendsWhatItAccepted() async throws {
        let (fake, d) = try await Self.linked(Self.band(acquire: false))
        let stream = try await Self.open(d, Readiness())
        for n in 0..<5 { try stream.write(Self.value(n)) }  // each reply: relinkd has it to send
        await d.daemon.closeWriteStream(stream.path)
        #expect(throws: RelinkError.self) { try stream.write(Self.value(5)) }
        var received: [[UInt8]] = []
        try await eventually("the five accepted values reached the peripheral") {
            received += await fake.takeWrites(T.band, service: T.heartRate, characteristic: Self.control)
            return received.count >= 5
        }
        #expect(received.map(Self.number) == Array(0..<5))
        await d.stop()
    }
}
