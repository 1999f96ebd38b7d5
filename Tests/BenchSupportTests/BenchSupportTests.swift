import Foundation
import Testing
@testable import BenchSupport

/// Runs a program, returns (status, stdout).
func run(_ path: String, _ args: [String]) throws -> (Int32, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

func busctl(_ bench: Bench, _ args: String...) throws -> String {
    let (status, out) = try run("/usr/bin/busctl", ["--address=\(bench.busAddress)"] + args)
    #expect(status == 0, "busctl \(args) failed")
    return out
}

/// Processes whose command line mentions `marker`.
func processes(mentioning marker: String) -> [Int32] {
    let fm = FileManager.default
    guard let entries = try? fm.contentsOfDirectory(atPath: "/proc") else { return [] }
    return entries.compactMap { entry -> Int32? in
        guard let pid = Int32(entry), pid != getpid(),
              let data = fm.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
        return String(decoding: data, as: UTF8.self).contains(marker) ? pid : nil
    }
}

@Suite(.serialized)
struct BenchSupportTests {
    @Test func startsAPrivateBusWhereBlueZAnswers() async throws {
        let bench = try await Bench.start()
        do {
            #expect(bench.busAddress.hasPrefix("unix:path=\(bench.directory)/"))
            #expect(bench.info.central.address == "00:00:00:00:00:01")
            let lock = try #require(bench.peripheral("lock"))
            #expect(lock.devicePath == "/org/bluez/hci0/dev_" + lock.address.replacingOccurrences(of: ":", with: "_"))
            #expect(lock.advName == "RLK-7F3A" && lock.gapName == "Front Door")
            #expect(bench.peripheral("band")?.kind == "band")
            let objects = try busctl(bench, "call", "org.bluez", "/",
                                     "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
            #expect(objects.contains("/org/bluez/hci0"))
            #expect(objects.contains("org.bluez.Adapter1"))
            #expect(objects.contains("/org/bluez/\(lock.adapter)"))
            try await bench.ping()
        } catch {
            await bench.stop()
            throw error
        }
        await bench.stop()
        // The launcher has exited (it stops its children before it does).
        #expect(kill(bench.pid, 0) == -1 && errno == ESRCH)
    }

    @Test func controlCommandsChangeWhatTheBusShows() async throws {
        let bench = try await Bench.start(BenchOptions(peripherals: [.lock()]))
        do {
            let lock = try #require(bench.peripheral("lock"))
            let path = "/org/bluez/\(lock.adapter)"
            #expect(try busctl(bench, "get-property", "org.bluez", path, "org.bluez.Adapter1", "Powered")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "b true")
            try await bench.outOfRange("lock")
            #expect(try busctl(bench, "get-property", "org.bluez", path, "org.bluez.Adapter1", "Powered")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "b false")
            try await bench.inRange("lock")
            #expect(try busctl(bench, "get-property", "org.bluez", path, "org.bluez.Adapter1", "Powered")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "b true")
            try await bench.push("lock", state: "unlocked")
            let state = try await bench.get("lock")
            #expect(state["state"]?.stringValue == "unlocked")
            try await bench.setAdvName("lock", "RLK-SWIFT")
            #expect(try await bench.get("lock")["adv_name"]?.stringValue == "RLK-SWIFT")
            let restarted = try await bench.restartBlueZ()
            #expect(restarted["pid"] != restarted["old_pid"])
            #expect(try await bench.get("lock")["registrations"]?.intValue == 2)
        } catch {
            await bench.stop()
            throw error
        }
        await bench.stop()
    }

    @Test func badCommandsAreTypedErrors() async throws {
        let bench = try await Bench.start(BenchOptions(peripherals: [.band("wrist")]))
        await #expect(throws: BenchError.self) { try await bench.outOfRange("nosuch") }
        do {
            try await bench.send(.push("wrist", state: "locked"))
            try await bench.send(BenchCommand("no_such_command"))
            Issue.record("an unknown command was accepted")
        } catch let BenchError.commandFailed(command, message) {
            #expect(command == "no_such_command")
            #expect(message.contains("unknown command"))
        }
        await bench.stop()
        await #expect(throws: BenchError.notRunning) { try await bench.ping() }
    }

    @Test func eachBenchHasItsOwnBusAndNothingSurvivesStop() async throws {
        let a = try await Bench.start(BenchOptions(peripherals: [.lock()]))
        let b = try await Bench.start(BenchOptions(peripherals: [.lock()]))
        #expect(a.busAddress != b.busAddress)
        #expect(a.directory != b.directory)
        // dbus-daemon, BlueZoo and the lock carry the directory in their argv.
        #expect(processes(mentioning: a.directory).count == 3)
        await a.stop()
        await b.stop()
        for bench in [a, b] {
            #expect(processes(mentioning: bench.directory).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: bench.directory))
            #expect(kill(bench.pid, 0) != 0)
        }
    }

    @Test func startErrorsAreTyped() async throws {
        var missing = BenchOptions()
        missing.launcher = "/nonexistent/run-bench"
        await #expect(throws: BenchError.launcherNotFound("/nonexistent/run-bench")) {
            try await Bench.start(missing)
        }
        // A launcher that exits without a ready line.
        var silent = BenchOptions()
        silent.launcher = "/bin/true"
        do {
            _ = try await Bench.start(silent)
            Issue.record("a launcher without a ready line was accepted")
        } catch let BenchError.startFailed(message) {
            #expect(message.contains("exited"))
        }
        // The launcher refuses bad options with an error line.
        let twice = BenchOptions(peripherals: [.lock("x"), .band("x")])
        do {
            _ = try await Bench.start(twice)
            Issue.record("two peripherals with one name were accepted")
        } catch let BenchError.startFailed(message) {
            #expect(message.contains("used twice"))
        }
    }
}
