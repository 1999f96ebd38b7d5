import BenchSupport
import Foundation
import RelinkClient
import RelinkModel
import Testing

/// The peripheral role through relinkctl and `RelinkPeripheralManager`
/// against relinkd on the simulated bench (BlueZoo's GattManager1 and
/// LEAdvertisingManager1): publish, advertise, the state, answers to
/// requests that are not waiting, updates, and the restored state a
/// program gets. No remote central plays against it here.
@Suite(.serialized) struct PeripheralRoleBenchTests {
    static let id = "sensor-hub"
    static let service = "8e7f2a00-4b2c-4d1e-9a3f-72656c696e6b"

    @Test func relinkctlAndTheClientLibraryDriveThePeripheralRole() async throws {
        let serviceFile = try PeripheralRoleArgumentTests.file("bench-service.json", """
            {"uuid": "\(Self.service)", "characteristics": [
              {"uuid": "2a19", "properties": ["read", "notify"], "permissions": ["readable"], "cacheable": true},
              {"uuid": "2a24", "properties": ["read"], "permissions": ["readable"], "value": [83, 49]}]}
            """)
        let adFile = try PeripheralRoleArgumentTests.file("bench-ad.json",
                                                          #"{"localName": "Hub", "manufacturerData": [{"company": 76, "data": [2, 21]}]}"#)
        try await CtlHarness.with { h in
            try await h.ok("register", Self.id)
            let published = try await h.ok("--json", "publish", Self.id, serviceFile).jsonObject()
            #expect(published["published"] as? [String] == [Self.service])
            let advertising = try await h.ok("--json", "advertise", Self.id, adFile).jsonObject()
            #expect(advertising["bytes"] as? Int == 3 + 4 + 2 + 2 + 3)

            let state = try await h.ok("--json", "peripheral-role", Self.id).jsonObject()
            #expect((state["services"] as? [[String: Any]])?.map { $0["uuid"] as? String } == [Self.service])
            #expect((state["advertisement"] as? [String: Any])?["localName"] as? String == "Hub")
            let plain = try await h.ok("peripheral-role", Self.id).stdout
            #expect(plain.contains("  service \(Self.service)\n") && plain.contains("value 5331"), "\(plain)")

            let again = try await h.ctl("publish", Self.id, serviceFile)
            #expect(again.status == 1 && again.stderr.hasPrefix("relinkctl: org.relink.Error.AlreadyExists: "), "\(again)")
            let notWaiting = try await h.ctl("respond", Self.id, "99", "01")
            #expect(notWaiting.status == 1 && notWaiting.stderr.hasPrefix("relinkctl: org.relink.Error.UnknownRequest: "), "\(notWaiting)")
            let unknown = try await h.ctl("update", Self.id, Self.service, "2a6e", "01")
            #expect(unknown.status == 4 && unknown.stderr.hasPrefix("relinkctl: org.relink.Error.UnknownCharacteristic: "), "\(unknown)")
            try await h.ok("update", Self.id, Self.service, "2a19", "2a")

            // A program comes: the restored peripheral role first, as relinkctl left it.
            let manager = RelinkPeripheralManager(restoreIdentifier: Self.id, bus: .address(h.bus))
            let restored = try #require(try await manager.connect())
            #expect(restored.services.map(\.uuid.string) == [Self.service])
            #expect(restored.advertisement?.data.manufacturerData == [76: [2, 21]])
            let level = CharacteristicKey(service: try BluetoothUUID(parsing: Self.service), characteristic: BluetoothUUID(shortValue: 0x2A19))
            #expect(restored.cachedValues[level] == [0x2A], "the update of a cacheable characteristic is kept")
            #expect(try await manager.updateValue([0x2B], for: level))
            await #expect(throws: RelinkClientError.self) { try await manager.respond(to: 99, error: .unlikelyError) }
            try await manager.stopAdvertising()
            #expect(try await manager.state().advertisement == nil)
            try await manager.removeAllServices()
            #expect(try await manager.state().services.isEmpty)
            await manager.close()
            #expect(try await h.ok("--json", "peripheral-role", Self.id).jsonObject()["advertisement"] == nil)
        }
    }
}
