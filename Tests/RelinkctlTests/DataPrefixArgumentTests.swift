import BenchSupport
import Foundation
import Testing

/// relinkctl's data-prefix options (issue 22 item 3): a bad prefix exits 1
/// with InvalidArguments before any call, as every bad argument does.
@Suite struct DataPrefixArgumentTests {
    static let noBus = "unix:path=/nonexistent/relinkctl-test-bus"

    @Test func badPrefixesExitOneWithInvalidArgumentsBeforeAnyCall() async throws {
        let tooLong = "0x004c:" + String(repeating: "00", count: 253)
        let cases: [[String]] = [
            ["scan", "beacons", "--manufacturer-data", tooLong],
            ["scan", "beacons", "--manufacturer-data", "0x004c:0215/ff"],
            ["scan", "beacons", "--manufacturer-data", "0x12345:00"],
            ["scan", "beacons", "--service-data", "nope:00"],
            ["scan", "beacons", "--service-data", "feaa:2"],
            ["connect", "beacons", "00:00:00:00:00:04", "--match-manufacturer-data", tooLong],
            ["connect", "beacons", "00:00:00:00:00:04", "--match-service-data", "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b:" + String(repeating: "00", count: 239)],
        ]
        for arguments in cases {
            let result = try await CtlProcess.run(["--bus-address", Self.noBus] + arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("relinkctl: org.relink.Error.InvalidArguments: "), "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
        }
    }
}
