import BenchSupport
import DBus
import Foundation
import Testing

/// The already-connected strategy against a real third-party client: bleak
/// (3.1.0, from the checkout's `.venv`) connects the lock and holds the
/// link; relinkd, asked for the lock by its service, adopts that link
/// (`connected` with route `alreadyConnected`), notifications reach the
/// outbox, and bleak's link is never dropped, not even when relinkd cancels.
@Suite(.serialized, .timeLimit(.minutes(2))) struct BleakAdoptionTests {
    static let lockPath = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02")

    /// Finds the lock, connects, prints `connected`, prints `disconnected`
    /// if the link drops, and holds the link until stdin closes. With a
    /// second argument `start` it also subscribes to the lock state (BlueZ
    /// StartNotify) and prints `value XX` for each notification. (`acquire`,
    /// AcquireNotify, is not offered by BlueZoo 1.0.2's characteristics.)
    static let script = """
    import asyncio, sys
    from bleak import BleakClient, BleakScanner

    LOCK_STATE = "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"

    async def main():
        dev = await BleakScanner.find_device_by_address(sys.argv[1], timeout=15, bluez={"adapter": "hci0"})
        if dev is None:
            print("not-found", flush=True)
            return
        client = BleakClient(dev, disconnected_callback=lambda _: print("disconnected", flush=True))
        await client.connect()
        print("connected" if client.is_connected else "not-connected", flush=True)
        mode = sys.argv[2] if len(sys.argv) > 2 else "none"
        if mode != "none":
            await client.start_notify(LOCK_STATE, lambda _, d: print("value " + bytes(d).hex(), flush=True),
                                      bluez={"use_start_notify": mode == "start"})
            print("subscribed", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    asyncio.run(main())
    """

    static var python: String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".venv/bin/python").path
    }

    @Test func relinkdAdoptsTheLinkBleakHolds() async throws {
        try await adopt(bleakNotify: "none")
    }

    /// bleak also subscribed to the same characteristic (StartNotify):
    /// relinkd's subscription works beside it, each value reaches relinkd's
    /// outbox once, and bleak still gets them too.
    @Test func relinkdSubscribesBesideBleaksStartNotify() async throws {
        try await adopt(bleakNotify: "start")
    }

    func adopt(bleakNotify: String) async throws {
        try await Harness.with { h in
            #expect(FileManager.default.isExecutableFile(atPath: Self.python), "run scripts/setup.sh first")
            let scriptPath = h.directory + "/hold_lock.py"
            let outPath = h.directory + "/bleak.out"
            try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
            _ = FileManager.default.createFile(atPath: outPath, contents: nil)
            _ = FileManager.default.createFile(atPath: h.directory + "/bleak.err", contents: nil)
            let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
            let stdin = Pipe()
            let bleak = Process()
            bleak.executableURL = URL(fileURLWithPath: Self.python)
            bleak.arguments = [scriptPath, Harness.lockAddress, bleakNotify]
            var env = ProcessInfo.processInfo.environment
            env["DBUS_SYSTEM_BUS_ADDRESS"] = h.bench.busAddress
            bleak.environment = env
            bleak.standardInput = stdin
            bleak.standardOutput = out
            bleak.standardError = FileHandle(forWritingAtPath: h.directory + "/bleak.err") ?? FileHandle.standardError
            try bleak.run()
            defer {
                if bleak.isRunning { bleak.terminate() }
                bleak.waitUntilExit()
                try? out.close()
            }
            func bleakOutput() -> String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }

            try await eventually(timeout: .seconds(30), "bleak to report") { bleakOutput().contains("\n") || !bleak.isRunning }
            try #require(bleakOutput().split(separator: "\n").first == "connected", "bleak: \(bleakOutput())")
            #expect((try? await h.lockConnectedOnBlueZ()) == true)
            if bleakNotify != "none" {
                try await eventually(timeout: .seconds(10), "bleak to subscribe") { bleakOutput().contains("subscribed") || !bleak.isRunning }
                try #require(bleakOutput().contains("subscribed"), "bleak: \(bleakOutput()) \((try? String(contentsOfFile: h.directory + "/bleak.err", encoding: .utf8)) ?? "")")
            }

            try await h.control.register(Harness.id)
            try await h.control.connect(Harness.id, Harness.lockAddress, services: [Harness.lockService],
                                        extra: [.init(.string("strategies"), .variant(.array(.string, [.string("already-connected")])))])
            try await h.waitForEvents("connected", count: 1)
            #expect(try await h.events("connected").map(\.route) == ["alreadyConnected"])
            try await h.control.subscribe(Harness.id, Harness.lockAddress, Harness.lockService, Harness.lockState)
            try await h.waitUntilNotificationsFlow()
            try await h.push([1, 2, 3])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [1, 2, 3])
            let values = try await h.notifiedValues()
            #expect(Set(values).count == values.count, "a value was delivered twice: \(values)")
            if bleakNotify != "none" {
                let seen = bleakOutput().split(separator: "\n").filter { $0.hasPrefix("value ") }
                #expect(["01", "02", "03"].allSatisfy { seen.contains("value \($0)") }, "bleak's own notifications: \(seen)")
            }

            // Cancelling the adopted intent leaves bleak's link up.
            try await h.control.call("Cancel", [.string(Harness.id), .string(Harness.lockAddress)])
            // What is tested is that no teardown comes: watch the link a while.
            try await observeQuietly(for: .milliseconds(500), "the link bleak holds stays up after Cancel") {
                (try? await h.lockConnectedOnBlueZ()) == true
            }
            #expect((try? await h.lockConnectedOnBlueZ()) == true, "relinkd tore down the link bleak holds")
            #expect(!bleakOutput().contains("disconnected"), "bleak saw its link drop: \(bleakOutput())")
            #expect(bleak.isRunning)
            if bleakNotify != "none" {
                // relinkd letting go does not stop bleak's own notifications.
                try await h.bench.send(.pushValue("lock", hex: "07"))
                try await eventually(timeout: .seconds(5), "bleak to get a value after relinkd cancelled") {
                    bleakOutput().contains("value 07")
                }
            }
            try stdin.fileHandleForWriting.close()
        }
    }
}
