import BenchSupport
import Foundation
import Testing

/// The peripheral-role commands' arguments: each bad one exits 1 with
/// InvalidArguments before any call (no bus needed), and a malformed
/// number or a missing argument is a usage error (exit 2).
@Suite struct PeripheralRoleArgumentTests {
    static let noBus = "unix:path=/nonexistent/relinkctl-test-bus"

    static func file(_ name: String, _ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("relinkctl-\(ProcessInfo.processInfo.processIdentifier)-\(name)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func badArgumentsExitOneWithInvalidArgumentsBeforeAnyCall() async throws {
        let tooLongAd = try Self.file("ad-long.json", #"{"localName": "a name far too long for thirty-one bytes"}"#)
        let notJSON = try Self.file("not.json", "{")
        let gap = try Self.file("gap.json", #"{"uuid": "1800"}"#)
        let twice = try Self.file("twice.json", #"[{"uuid": "180f"}, {"uuid": "0000180f"}]"#)
        let staticNotify = try Self.file("static.json",
                                         #"{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": ["read", "notify"], "permissions": ["readable"], "value": [1]}]}"#)
        let overValue = String(repeating: "00", count: 513)
        let cases: [(String, [String])] = [
            ("no such file", ["publish", "hub", "/nonexistent/service.json"]),
            ("not JSON", ["publish", "hub", notJSON]),
            ("GAP is bluetoothd's", ["publish", "hub", gap]),
            ("a service twice", ["publish", "hub", twice]),
            ("a static value with notify", ["publish", "hub", staticNotify]),
            ("over 31 bytes", ["advertise", "hub", tooLongAd]),
            ("not an advertisement", ["advertise", "hub", notJSON]),
            ("bad UUID", ["unpublish", "hub", "xyz"]),
            ("neither UUID nor --all", ["unpublish", "hub"]),
            ("both UUID and --all", ["unpublish", "hub", "180f", "--all"]),
            ("unknown ATT error", ["respond", "hub", "7", "--error", "nope"]),
            ("value and --error", ["respond", "hub", "7", "01", "--error", "unlikelyError"]),
            ("not hex", ["respond", "hub", "7", "zz"]),
            ("respond over 512 bytes", ["respond", "hub", "7", overValue]),
            ("update over 512 bytes", ["update", "hub", "180f", "2a19", overValue]),
            ("update bad UUID", ["update", "hub", "180f", "nope", "01"]),
            ("bad identifier", ["peripheral-role", "h/b"]),
        ]
        for (what, arguments) in cases {
            let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
            #expect(result.status == 1, "\(what): \(result)")
            #expect(result.stderr.hasPrefix("relinkctl: org.relink.Error.InvalidArguments: "), "\(what): \(result)")
            #expect(result.stdout.isEmpty, "\(what)")
        }
    }

    @Test func goodArgumentsGetAsFarAsTheBusAndMalformedNumbersAreUsageErrors() async throws {
        let ad = try Self.file("ad.json", #"{"localName": "Sensor-1", "serviceUUIDs": ["180f"], "manufacturerData": [{"company": 76, "data": [2, 21]}]}"#)
        let service = try Self.file("service.json", #"{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": ["read", "notify"], "permissions": ["readable"], "cacheable": true}]}"#)
        for arguments in [["advertise", "hub", ad], ["publish", "hub", service], ["respond", "hub", "7", "01ff"], ["respond", "hub", "7", "--error", "unlikelyError"],
                          ["update", "hub", "180f", "2a19", "2a"], ["unpublish", "hub", "--all"], ["stop-advertising", "hub"], ["peripheral-role", "hub"]] {
            let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
            #expect(result.status == 3, "\(arguments): checked, then relinkd is not reachable: \(result)")
        }
        for arguments in [["respond", "hub", "seven"], ["respond", "hub", "-1"], ["update", "hub", "180f", "2a19"]] {
            let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
        }
    }
}
