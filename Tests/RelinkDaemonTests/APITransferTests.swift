import BenchSupport
import DBus
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Durable transfers end to end (issue 22 item 6): relinkd on the bench
/// writes a file to the lock's firmware characteristic, which records every
/// value it receives; the whole file must arrive, in order, with or without
/// a client attached, and across a relinkd SIGKILL (with `resume`).
@Suite(.serialized, .timeLimit(.minutes(3))) struct APITransferTests {
    static let firmware = "8e7f1a03-4b2c-4d1e-9a3f-72656c696e6b"

    /// Random bytes: a chunk repeats nowhere, so one sent again is found.
    static func file(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func start(_ client: APIClient, _ central: ObjectPath, _ data: [UInt8], _ options: [String: DBusValue] = [:],
                      characteristic: String = firmware) async throws -> String {
        try await client.central(central, "StartTransfer", [
            .string(Harness.lockAddress), .string(Harness.lockService), .string(characteristic),
            .array(.byte, data.map { .byte($0) }), APIClient.options(options),
        ]).decode(String.self)
    }

    /// A connected lock and a client registered; the lock logs its firmware writes to a file.
    static func prepared(_ h: Harness) async throws -> (APIClient, ObjectPath, String) {
        let client = try await APIClient.connect(h.bench.busAddress)
        let (central, _, _) = try await client.register(Harness.id)
        try await client.connectLock(central, subscribe: false)
        try await h.waitForEvents("connected", count: 1)
        let log = h.directory + "/firmware.log"
        try await h.bench.send(BenchCommand("firmware_log", ["peripheral": .string("lock"), "path": .string(log)]))
        return (client, central, log)
    }

    static func received(_ log: String) throws -> [[UInt8]] { try #require(TransferLog.values(inFile: log)) }

    @Test func aFileArrivesWholeAndInOrderAfterItsClientLeft() async throws {
        try await Harness.with { h in
            let (client, central, log) = try await Self.prepared(h)
            let data = Self.file(64 * 1024)
            let transfer = try await Self.start(client, central, data)
            client.close()  // the transfer outlives its client
            try await h.waitForEvents("transfer-completed", count: 1, timeout: .seconds(60))
            let values = try Self.received(log)
            #expect(values.flatMap { $0 } == data, "every byte once, in order")
            #expect(values.dropLast().allSatisfy { $0.count == values[0].count }, "chunks of one size: \(Set(values.map(\.count)))")
            let completed = try #require(try await h.events("transfer-completed").first)
            #expect(completed.payload.contains(transfer) && completed.payload.contains("\"offset\":65536"), "\(completed.payload)")
            // A client that comes back finds nothing under way.
            let again = try await APIClient.connect(h.bench.busAddress)
            defer { again.close() }
            let (c2, _, _) = try await again.register(Harness.id)
            #expect(try await again.central(c2, "Transfers").decode([[String: DBusValue]].self).isEmpty)
        }
    }

    @Test func acrossARelinkdSIGKILLAResumingTransferArrivesWholeAndOneWithoutResumeFailsNamingItsOffset() async throws {
        try await Harness.with { h in
            let (client, central, log) = try await Self.prepared(h)
            let data = Self.file(256 * 1024)
            _ = try await Self.start(client, central, data, ["resume": .boolean(true), "with_response": .boolean(false)])
            try await eventually(timeout: .seconds(60), "a third of the file arrived") {
                ((try? await h.bench.get("lock"))?["firmware_bytes"]?.intValue ?? 0) >= data.count / 3
            }
            h.killRelinkd()
            client.close()
            try await h.startRelinkd()
            try await h.waitForEvents("transfer-completed", count: 1, timeout: .seconds(90))
            let values = try Self.received(log)
            let twice = try #require(TransferLog.duplicates(in: values, of: data), "the file from start to end, resent chunks aside")
            let chunk = values[0].count
            print("TRANSFER-RESUME duplicates=\(twice) bytes chunk=\(chunk) values=\(values.count)")
            #expect(twice % chunk == 0, "whole chunks are sent again: \(twice) bytes")
            #expect(twice <= 8 * 1024 + chunk, "at most relinkd's window of unstored bytes and the chunk in flight: \(twice) bytes")

            // Without resume: the next relinkd fails it, naming the stored offset.
            try await h.bench.send(BenchCommand("firmware_log", ["peripheral": .string("lock"), "path": .string(log)]))
            let other = try await APIClient.connect(h.bench.busAddress)
            defer { other.close() }
            let (c2, _, _) = try await other.register(Harness.id)
            let transfer = try await Self.start(other, c2, data)
            try await eventually(timeout: .seconds(60), "some chunks arrived") {
                ((try? await h.bench.get("lock"))?["firmware_bytes"]?.intValue ?? 0) >= 4 * chunk
            }
            h.killRelinkd()
            try await h.startRelinkd()
            try await h.waitForEvents("transfer-failed", count: 1)
            let failed = try #require(try await h.events("transfer-failed").first)
            #expect(failed.payload.contains(transfer) && failed.payload.contains("org.relink.Error.Interrupted"), "\(failed.payload)")
            let reached = try Self.received(log).flatMap { $0 }.count
            #expect(failed.payload.contains("\"offset\":"), "\(failed.payload)")
            let offset = failed.payload.components(separatedBy: "\"offset\":").last.flatMap { Int($0.prefix { $0.isNumber }) } ?? -1
            #expect(offset >= 0 && offset <= reached && offset % chunk == 0, "the stored offset \(offset) of \(reached) bytes received")
        }
    }

    @Test func aFileOverOneMiBPassedAsADescriptorArrivesWhole() async throws {
        try await Harness.with { h in
            let (client, central, log) = try await Self.prepared(h)
            defer { client.close() }
            let data = Self.file(2 << 20)
            let path = h.directory + "/image.bin"
            try Data(data).write(to: URL(fileURLWithPath: path))
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            #expect(fd >= 0)
            let file = UnixFD(takingOwnershipOf: fd)
            let transfer = try await client.central(central, "StartTransferFromFile", [
                .string(Harness.lockAddress), .string(Harness.lockService), .string(Self.firmware), .unixFD(file),
                APIClient.options(["with_response": .boolean(false)]),
            ]).decode(String.self)
            try FileManager.default.removeItem(atPath: path)  // relinkd read it whole before it replied
            try await h.waitForEvents("transfer-completed", count: 1, timeout: .seconds(120))
            #expect(try await h.events("transfer-completed").first?.payload.contains(transfer) == true)
            #expect(try Self.received(log).flatMap { $0 } == data, "every byte once, in order")
            // A pipe is no regular file.
            var ends: [Int32] = [-1, -1]
            #expect(pipe(&ends) == 0)
            let reader = UnixFD(takingOwnershipOf: ends[0]), writer = UnixFD(takingOwnershipOf: ends[1])
            do {
                try await client.central(central, "StartTransferFromFile", [
                    .string(Harness.lockAddress), .string(Harness.lockService), .string(Self.firmware), .unixFD(reader), APIClient.options(),
                ])
                Issue.record("a pipe was taken")
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.relink.Error.InvalidArguments", "\(error)")
            }
            _ = writer
        }
    }

    @Test func badInputGetsTypedErrors() async throws {
        try await Harness.with { h in
            let (client, central, _) = try await Self.prepared(h)
            defer { client.close() }
            func refused(_ name: String, _ call: () async throws -> Void) async {
                do {
                    try await call()
                    Issue.record("accepted; expected \(name)")
                } catch let error as DBusError {
                    #expect(error.name.rawValue == "org.relink.Error." + name, "\(error)")
                } catch { Issue.record("\(error)") }
            }
            await refused("InvalidArguments") { _ = try await Self.start(client, central, []) }
            await refused("InvalidArguments") { _ = try await Self.start(client, central, [UInt8](repeating: 7, count: (1 << 20) + 1)) }
            await refused("InvalidArguments") { _ = try await Self.start(client, central, [1], ["speed": .boolean(true)]) }
            await refused("NotSupported") { _ = try await Self.start(client, central, [1], characteristic: Harness.lockState) }
            await refused("UnknownCharacteristic") { _ = try await Self.start(client, central, [1], characteristic: "8e7f1aee-4b2c-4d1e-9a3f-72656c696e6b") }
            await refused("ValueTooLong") { _ = try await Self.start(client, central, [1], ["with_response": .boolean(false), "chunk_size": .uint16(512)]) }
            await refused("UnknownTransfer") { try await client.central(central, "CancelTransfer", [.string(UUID().uuidString)]) }
            await refused("InvalidArguments") { try await client.central(central, "CancelTransfer", [.string("not-a-uuid")]) }
        }
    }
}
