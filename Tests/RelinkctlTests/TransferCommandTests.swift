import BenchSupport
import Foundation
import Testing

/// `relinkctl transfer` against relinkd on the bench: the file reaches the
/// lock's firmware characteristic whole, the outcome is printed (JSON, or
/// a line per progress event and the end when stdout is no terminal), bad
/// input is refused before relinkd is called.
@Suite(.serialized, .timeLimit(.minutes(3))) struct TransferCommandTests {
    static let id = "org.example.transfer"
    static let firmware = "8e7f1a03-4b2c-4d1e-9a3f-72656c696e6b"

    @Test func aFileIsTransferredAndItsOutcomePrinted() async throws {
        try await CtlHarness.with { h in
            try await h.registerAndConnectLock(Self.id)
            let log = h.directory + "/firmware.log", file = h.directory + "/image.bin"
            try await h.bench.send(BenchCommand("firmware_log", ["peripheral": .string("lock"), "path": .string(log)]))
            var generator = SystemRandomNumberGenerator()
            let data = (0..<(96 * 1024)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try Data(data).write(to: URL(fileURLWithPath: file))
            let target = [Self.id, CtlHarness.lockAddress, CtlHarness.lockService, Self.firmware, file]
            func ok(_ arguments: [String]) async throws -> CtlResult {
                let result = try await h.ctl(arguments)
                #expect(result.status == 0, "relinkctl \(arguments.joined(separator: " ")): \(result)")
                return result
            }

            let json = try await ok(["--json", "transfer"] + target)
            let document = try json.jsonObject()
            #expect(document["outcome"] as? String == "transfer-completed" && document["offset"] as? Int == data.count
                    && document["length"] as? Int == data.count, "\(document)")
            #expect(try #require(TransferLog.values(inFile: log)).flatMap { $0 } == data, "the lock received the file whole, in order")

            try await h.bench.send(BenchCommand("firmware_log", ["peripheral": .string("lock"), "path": .string(log)]))
            let plain = try await ok(["transfer"] + target + ["--no-response", "--resume"])
            let lines = plain.stdout.split(separator: "\n").map(String.init)
            #expect(lines.last?.hasSuffix("completed: \(data.count) bytes") == true, "\(plain)")
            #expect(lines.dropLast().allSatisfy { $0.hasPrefix("transfer ") && $0.hasSuffix("%)") }, "plain lines, no bar: \(plain)")
            #expect(try #require(TransferLog.values(inFile: log)).flatMap { $0 } == data)

            // Followed across a relinkd SIGKILL: relinkctl watches again when
            // relinkd is back, and the resumed transfer's end reaches it.
            try await h.bench.send(BenchCommand("firmware_log", ["peripheral": .string("lock"), "path": .string(log)]))
            let follower = try CtlFollower(["--bus-address", h.bus, "transfer"] + target + ["--no-response", "--resume", "--chunk-size", "20"])
            try await eventually(timeout: .seconds(30), "a third of the file arrived") {
                ((try? await h.bench.get("lock"))?["firmware_bytes"]?.intValue ?? 0) >= data.count / 3
            }
            h.killRelinkd()
            try await h.startRelinkd()
            let followed = try await follower.lines(timeout: .seconds(60)) { $0.last?.contains("completed") == true }
            #expect(followed.last?.hasSuffix("completed: \(data.count) bytes") == true, "\(followed) \(follower.stderr)")
            // It printed its last line before exiting: wait for the exit
            // (a SIGTERM now could beat it and be the status).
            #expect(try await follower.exitStatus(within: .seconds(30)) == 0, "\(follower.stderr)")
            follower.stop()
            #expect(TransferLog.duplicates(in: try #require(TransferLog.values(inFile: log)), of: data) != nil, "whole, resent chunks aside")

            let detached = try await ok(["transfer"] + target + ["--detach"])
            #expect(detached.stdout.trimmingCharacters(in: .whitespacesAndNewlines).count == 36, "\(detached)")
            try await h.waitForEvents(Self.id, kind: "transfer-completed", count: 4)
        }
    }

    @Test func badInputIsRefusedBeforeRelinkdIsCalled() async throws {
        try await CtlHarness.with(startRelinkd: false) { h in
            let empty = h.directory + "/empty.bin"
            #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
            let target = [Self.id, CtlHarness.lockAddress, CtlHarness.lockService, Self.firmware]
            for (arguments, what) in [([empty], "an empty file"), ([h.directory + "/missing.bin"], "a missing file"),
                                      ([empty, "--chunk-size", "0"], "chunk size 0")] {
                let result = try await h.ctl(["transfer"] + target + arguments)
                #expect(result.status == 1 && result.stderr.contains("org.relink.Error.InvalidArguments"), "\(what): \(result)")
            }
        }
    }
}
