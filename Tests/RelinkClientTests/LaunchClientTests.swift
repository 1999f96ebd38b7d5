import DBus
import RelinkAPI
import RelinkClient
import RelinkModel
import Testing

/// The client library's side of relaunch (docs/relaunch.md): the launch
/// reason in the restored state, the `launch` option of `Register`, and the
/// contract's one parser of a spec.
@Suite struct LaunchClientTests {
    static let reason = LaunchReason(busName: "org.example.Lock", identifiers: [try! RestoreIdentifier("front-door")],
                                     events: ["value-notified", "connected"])

    @Test func theRestoredStateCarriesTheLaunchReasonOnlyWhenRelinkdStartedTheProgram() throws {
        let started = try RelinkRestoredState(DecodingTests.restored(replacing: ("launch_reason", LaunchOptions.reasonValue(Self.reason))))
        #expect(started.launchReason == Self.reason)
        #expect(started.launchReason?.events == ["connected", "value-notified"], "sorted")
        #expect(try RelinkRestoredState(DecodingTests.restored()).launchReason == nil)
    }

    /// An `a{sv}` value as the options dictionary a method reads (empty when it is none).
    static func options(_ value: DBusValue) -> [String: DBusValue] {
        guard case .dictionary(_, _, let entries) = value else { return [:] }
        var options: [String: DBusValue] = [:]
        for entry in entries { if case .string(let k) = entry.key, case .variant(let v) = entry.value { options[k] = v } }
        return options
    }

    @Test func aSpecRoundTripsAndBadOnesAreRefusedByTheOneParser() throws {
        let spec = LaunchSpec(busName: "org.example.Lock", wakeOn: ["value-notified"])
        #expect(try LaunchOptions.spec(in: Self.options(LaunchOptions.value(spec))) == spec)
        #expect(try LaunchOptions.spec(in: [LaunchOptions.busNameKey: .string("")]) == nil, "the removal")
        for bad: [String: DBusValue] in [
            [LaunchOptions.busNameKey: .string(":1.42")],
            [LaunchOptions.busNameKey: .string("nodots")],
            [LaunchOptions.busNameKey: .string("org.example.Lock"), LaunchOptions.wakeOnKey: .array(.string, [.string("value-changed")])],
            [LaunchOptions.wakeOnKey: .array(.string, [])],
        ] {
            #expect(throws: RelinkError.self) { try LaunchOptions.spec(in: bad) }
        }
        // With a systemd unit: kept on the wire; a name that is no service unit is refused.
        let unitSpec = LaunchSpec(busName: "org.example.Lock", wakeOn: [], systemdUnit: "relink-example-lock.service")
        #expect(try LaunchOptions.spec(in: Self.options(LaunchOptions.value(unitSpec))) == unitSpec)
        #expect(throws: RelinkError.self) {
            try LaunchOptions.spec(in: [LaunchOptions.busNameKey: .string("org.example.Lock"), LaunchOptions.systemdUnitKey: .string("../etc/passwd")])
        }
        let register = RelinkRegisterOptions(launch: spec)
        #expect(register.launch == spec)
    }
}
