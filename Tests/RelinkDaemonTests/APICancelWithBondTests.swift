import BenchSupport
import DBus
import Foundation
import Testing

/// `Central1.CancelWith(peripheral, {remove_bond: true})` end to end
/// (issue 24, item 1): two identifiers use the bench's lock, paired; the
/// first one's `CancelWith` keeps the bond and says why (the second still
/// uses it), the second's removes it from bluetoothd (`Adapter1.RemoveDevice`),
/// journalled, with no `bond-removed` event.
@Suite(.serialized, .timeLimit(.minutes(2))) struct APICancelWithBondTests {
    static let other = "org.example.other"

    static func cancelWith(_ client: APIClient, _ central: ObjectPath, removeBond: Bool) async throws -> (Bool, String) {
        try await client.central(central, "CancelWith", [.string(Harness.lockAddress), APIClient.options(["remove_bond": .boolean(removeBond)])])
            .decode(Bool.self, String.self)
    }

    @Test func theBondGoesWithTheLastUseOfTheLockAndStaysWhileAnotherIdentifierUsesIt() async throws {
        try await Harness.with { h in
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            let (second, _, _) = try await client.register(Self.other)
            for path in [central, second] {
                try await client.central(path, "Connect", [
                    .string(Harness.lockAddress), APIClient.options(["services": .array(.string, [.string(Harness.lockService)])]),
                ])
            }
            try await h.waitForEvents("connected", count: 1)
            try await eventually(timeout: .seconds(30), "the lock linked") { try await h.lockConnectedOnBlueZ() }
            try await client.central(central, "Pair", [.string(Harness.lockAddress)])
            #expect(try await APIPairingTests.bluez(h, "Paired"))

            let (removed, reason) = try await Self.cancelWith(client, central, removeBond: true)
            #expect(!removed && reason.contains("another identifier"), "\(reason)")
            #expect(try await APIPairingTests.bluez(h, "Paired"), "the other identifier keeps the bond")

            let (last, why) = try await Self.cancelWith(client, second, removeBond: true)
            #expect(last && why.isEmpty, "\(why)")
            #expect((try? await APIPairingTests.bluez(h, "Paired")) != true, "bluetoothd forgot the lock")
            let log = try String(contentsOfFile: h.directory + "/relinkd-1.log", encoding: .utf8)
            #expect(log.contains("bond kept") && log.contains("bond removed at the client's request"))
            #expect(try await h.events("bond-removed").isEmpty, "relinkd removed it itself: no event")
        }
    }
}
