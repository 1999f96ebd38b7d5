import DBus
import Foundation
import Testing

/// Malformed client API calls get typed org.relink.Error.* replies, change
/// nothing, and relinkd stays up.
@Suite(.serialized, .timeLimit(.minutes(2))) struct APIValidationTests {
    struct Case: Sendable, CustomStringConvertible {
        var method: String
        var arguments: [DBusValue]
        var error: String
        var central = true
        var description: String { "\(method)\(arguments) -> \(error)" }
    }

    static let invalid = "org.relink.Error.InvalidArguments"
    static let empty = APIClient.options()
    static func opts(_ entries: [String: DBusValue]) -> DBusValue { APIClient.options(entries) }
    static let lock = DBusValue.string(Harness.lockAddress)
    static let service = DBusValue.string(Harness.lockService)
    static let characteristic = DBusValue.string(Harness.lockState)

    static let cases: [Case] = [
        // Manager1
        Case(method: "Register", arguments: [.string(""), empty], error: invalid, central: false),
        Case(method: "Register", arguments: [.string("has space"), empty], error: invalid, central: false),
        Case(method: "Register", arguments: [.string("ünïcode"), empty], error: invalid, central: false),
        Case(method: "Register", arguments: [.string(String(repeating: "a", count: 5000)), empty], error: invalid, central: false),
        Case(method: "Register", arguments: [.string("ok"), opts(["bogus": .boolean(true)])], error: invalid, central: false),
        Case(method: "Register", arguments: [.string("ok"), opts(["replay": .string("yes")])], error: invalid, central: false),
        Case(method: "Register", arguments: [.string("ok"), opts(["name_rule": .string("loudest")])], error: invalid, central: false),
        Case(method: "Register", arguments: [.string("ok"), opts(["event_limit": .uint32(0)])], error: invalid, central: false),
        Case(method: "Register", arguments: [.string("ok"), opts(["event_limit": .uint32(100_001)])], error: invalid, central: false),
        Case(method: "Register", arguments: [.string("ok"), opts(["event_limit": .int32(10)])], error: invalid, central: false),
        Case(method: "Register", arguments: [.string("ok"), .dictionary(key: .string, value: .variant,
            (0..<17).map { .init(.string("k\($0)"), .variant(.boolean(true))) })], error: invalid, central: false),
        Case(method: "Register", arguments: [.string("ok")], error: invalid, central: false),
        Case(method: "Unregister", arguments: [.string("nobody")], error: "org.relink.Error.UnknownIdentifier", central: false),
        Case(method: "Unregister", arguments: [.string("bad id")], error: invalid, central: false),
        // Central1
        Case(method: "Connect", arguments: [.string("00:11:22"), empty], error: invalid),
        Case(method: "Connect", arguments: [.string("not-a-peripheral"), empty], error: invalid),
        Case(method: "Connect", arguments: [.string("1B4E28BA-2FA1-11D2-883F-0016D3CCA427"), empty], error: "org.relink.Error.UnknownPeripheral"),
        Case(method: "Connect", arguments: [lock, opts(["bogus": .boolean(true)])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["timeout": .string("soon")])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["timeout": .double(-1)])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["timeout": .double(.nan)])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["timeout": .double(5), "pending_until_cancelled": .boolean(true)])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["pending_until_cancelled": .boolean(false)])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["strategies": .array(.string, [.string("teleport")])])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["strategies": .array(.string, [.string("scan"), .string("scan")])])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["address_type": .string("static")])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["services": .array(.string, (0..<65).map { _ in service })])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["services": .array(.string, [.string("xyz")])])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["match_name": .string("")])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["match_name": .string(String(repeating: "é", count: 125))])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["match_manufacturer_id": .uint32(89)])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["match_services": .array(.string, [.string("xyz")])])], error: invalid),
        Case(method: "Connect", arguments: [lock, opts(["match_services": .array(.string, (0..<65).map { _ in service })])], error: invalid),
        Case(method: "Cancel", arguments: [lock], error: "org.relink.Error.UnknownPeripheral"),
        Case(method: "Subscribe", arguments: [.string("AA:BB:CC:DD:EE:FF"), service, characteristic], error: "org.relink.Error.UnknownPeripheral"),
        Case(method: "Subscribe", arguments: [lock, .string("not-a-uuid"), characteristic], error: invalid),
        Case(method: "Unsubscribe", arguments: [lock, service, characteristic], error: "org.relink.Error.UnknownPeripheral"),
        Case(method: "Scan", arguments: [.array(.string, [.string("xyz")]), empty], error: invalid),
        Case(method: "Scan", arguments: [.array(.string, []), opts(["allow_duplicates": .uint32(1)])], error: invalid),
        Case(method: "Scan", arguments: [.array(.string, []), opts(["window": .uint32(1)])], error: invalid),
        Case(method: "Read", arguments: [lock, service, characteristic], error: "org.relink.Error.UnknownPeripheral"),
        // Up to 4096 bytes are read and then checked against the link (here: no such peripheral); more is malformed.
        Case(method: "Write", arguments: [lock, service, characteristic, .array(.byte, Array(repeating: .byte(1), count: 513)), empty],
             error: "org.relink.Error.UnknownPeripheral"),
        Case(method: "Write", arguments: [lock, service, characteristic, .array(.byte, Array(repeating: .byte(1), count: 4097)), empty], error: invalid),
        Case(method: "Write", arguments: [lock, service, characteristic, .array(.byte, [.byte(1)]), opts(["with_response": .string("no")])], error: invalid),
        Case(method: "Events", arguments: [.uint64(0), .uint32(0)], error: invalid),
        Case(method: "Events", arguments: [.uint64(0), .uint32(10_001)], error: invalid),
        Case(method: "Events", arguments: [.uint64(.max), .uint32(10)], error: invalid),
        Case(method: "Events", arguments: [.string("0"), .uint32(10)], error: invalid),
        Case(method: "Ack", arguments: [], error: invalid),
        Case(method: "Ack", arguments: [.uint64(5)], error: invalid),
        Case(method: "Watch", arguments: [.uint64(.max)], error: invalid),
        Case(method: "NoSuchMethod", arguments: [], error: "org.freedesktop.DBus.Error.UnknownMethod"),
    ]

    @Test func malformedCallsGetTypedErrorsAndChangeNothing() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            let before = try await h.control.status()
            for c in Self.cases {
                do {
                    if c.central {
                        try await client.central(central, c.method, c.arguments)
                    } else {
                        try await client.call(APIClient.manager, "org.relink.Manager1", c.method, c.arguments)
                    }
                    Issue.record("accepted: \(c)")
                } catch let error as DBusError {
                    #expect(error.name.rawValue == c.error, "\(c): \(error)")
                    #expect(!error.message.isEmpty)
                }
            }
            // A Central1 of an identifier that does not exist.
            do {
                try await client.central(try ObjectPath("/org/relink/central/nobody"), "StopScan")
                Issue.record("a missing central answered")
            } catch let error as DBusError {
                #expect(error.name == .unknownObject)
            }
            // The state, without the inbox's counts (how many inputs wait,
            // the most that ever did), which every input moves.
            var after = try await h.control.status(), earlier = before
            after["inbox"] = nil
            earlier["inbox"] = nil
            #expect(NSDictionary(dictionary: earlier) == NSDictionary(dictionary: after), "a refused call changed the state")
            #expect(try await h.control.events(Harness.id).isEmpty)
            #expect(h.relinkd?.process.isRunning == true)
        }
    }

    @Test func introspectionShowsTheInterfaces() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            let address = "--address=\(h.bench.busAddress)"
            let root = try await runTool("/usr/bin/busctl", [address, "introspect", "org.relink", "/org/relink"])
            #expect(root.status == 0, "\(root.output)")
            for name in ["org.relink.Manager1", "org.freedesktop.DBus.ObjectManager", "org.freedesktop.DBus.Properties",
                         "org.freedesktop.DBus.Introspectable", ".Register", ".ListIdentifiers", ".Unregister", ".Ready", ".Status"] {
                #expect(root.output.contains(name), "\(name) missing in: \(root.output)")
            }
            // Only `Ready` announces its changes; `Version` and `Adapter` never change (docs/api/Manager1.md).
            func flags(_ member: String, in output: String) -> String {
                output.split(separator: "\n").first { $0.hasPrefix(member + " ") }.map(String.init) ?? ""
            }
            #expect(flags(".Ready", in: root.output).hasSuffix("emits-change"), "\(root.output)")
            for member in [".Version", ".Adapter"] { #expect(flags(member, in: root.output).hasSuffix("const"), "\(root.output)") }
            for member in [".Status", ".Discovering"] {
                let line = flags(member, in: root.output)
                #expect(!line.isEmpty && !line.contains("emits-change") && !line.contains("const"), "\(line)")
            }
            let node = try await runTool("/usr/bin/busctl", [address, "introspect", "org.relink", central.rawValue])
            for member in [".Identifier", ".Owner"] { #expect(flags(member, in: node.output).hasSuffix("const"), "\(node.output)") }
            for name in ["org.relink.Central1", ".Connect", ".Event", ".LastSequence", ".Watch"] {
                #expect(node.output.contains(name), "\(name) missing in: \(node.output)")
            }
            let tree = try await runTool("/usr/bin/busctl", [address, "tree", "org.relink"])
            #expect(tree.output.contains(central.rawValue), "\(tree.output)")
        }
    }
}
