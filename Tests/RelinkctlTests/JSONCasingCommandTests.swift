import BenchSupport
import Foundation
import RelinkAPI
import Testing

/// One casing for every JSON document relink emits (issue 38 item 3,
/// docs/api/README.md#json): each relinkctl command's `--json` document, in
/// a session that fills them (a link, a subscription, a value, a launch
/// spec, the peripheral role, root's quotas), and with them relinkd's own
/// documents they carry (`Status`, event payloads, the GATT database, the
/// peripheral role's state). Every key must be camelCase.
@Suite(.serialized) struct JSONCasingCommandTests {
    static let id = "front-door"
    static let hub = "sensor-hub"

    @Test func everyJSONDocumentHasCamelCaseKeys() async throws {
        let serviceFile = try PeripheralRoleArgumentTests.file("casing-service.json", """
            {"uuid": "8e7f2a00-4b2c-4d1e-9a3f-72656c696e6b", "characteristics": [
              {"uuid": "2a19", "properties": ["read", "notify"], "permissions": ["readable"], "cacheable": true}]}
            """)
        let adFile = try PeripheralRoleArgumentTests.file("casing-ad.json",
                                                          #"{"localName": "Hub", "manufacturerData": [{"company": 76, "data": [2, 21]}]}"#)
        try await CtlHarness.with { h in
            let lock = CtlHarness.lockAddress, service = CtlHarness.lockService, state = CtlHarness.lockState
            var documents: [(String, CtlResult)] = []
            func json(_ arguments: String...) async throws {
                let result = try await h.ctl(["--json"] + arguments)
                #expect(result.status == 0, "relinkctl --json \(arguments.joined(separator: " ")): \(result)")
                documents.append((arguments.joined(separator: " "), result))
            }
            try await json("register", Self.id)
            try await json("scan", Self.id, service, "--allow-duplicates")
            try await h.waitForEvents(Self.id, kind: "discovered")
            try await json("stop-scan", Self.id)
            try await json("connect", Self.id, lock, "--service", service)
            try await h.waitForEvents(Self.id, kind: "connected")
            try await json("subscribe", Self.id, lock, service, state)
            let prober = h.prober(7)
            try await h.waitForEvents(Self.id, kind: "value-notified")
            prober.cancel()
            try await json("read", Self.id, lock, service, state)
            try await json("write", Self.id, lock, service, CtlHarness.lockCommand, "6c6f636b")
            try await json("gatt", Self.id, lock)
            try await json("peripherals")
            let name = "org.relink.example.CasingLock"
            try "[D-BUS Service]\nName=\(name)\nExec=/bin/true\n".write(toFile: h.bench.directory + "/services/\(name).service",
                                                                       atomically: true, encoding: .utf8)
            try await json("launch", Self.id, "--bus-name", name, "--wake-on", "connected")
            try await json("show", Self.id)
            try await json("list")
            try await json("events", Self.id)
            try await json("register", Self.hub)
            try await json("publish", Self.hub, serviceFile)
            try await json("advertise", Self.hub, adFile)
            try await json("peripheral-role", Self.hub)
            try await json("show", Self.hub)
            try await json("update", Self.hub, "8e7f2a00-4b2c-4d1e-9a3f-72656c696e6b", "2a19", "63")
            try await json("status")
            try await json("unsubscribe", Self.id, lock, service, state)
            try await json("cancel", Self.id, lock)
            try await json("stop-advertising", Self.hub)
            try await json("forget", Self.hub)

            // The session filled what it should: else a key could hide in an
            // entry that was absent.
            let status = try #require(documents.last { $0.0 == "status" }).1
            for key in ["\"launch\":", "\"lastSequence\"", "\"quotas\":", "\"inbox\":", "\"identityAddress\":", "\"adapterState\":"] {
                let where_ = key == "\"lastSequence\"" ? documents[0].1.stdout : status.stdout
                #expect(where_.contains(key), "\(key) missing: \(where_)")
            }
            let events = try #require(documents.first { $0.0 == "events \(Self.id)" }).1.stdout
            for kind in ["discovered", "connected", "value-notified"] { #expect(events.contains("\"kind\":\"\(kind)\""), "\(events)") }
            for (command, result) in documents {
                let offending = JSONKey.keysNotCamelCase(in: try result.json())
                #expect(offending.isEmpty, "relinkctl --json \(command): keys not camelCase: \(offending)\n\(result.stdout)")
            }
        }
    }
}
