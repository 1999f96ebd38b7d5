import BenchSupport
import DBus
import Foundation
import Testing

/// Passkey and numeric comparison end to end (issue 24, pair3): the bench's
/// lock demands them (BlueZoo patch 26), relinkd's agent forwards BlueZ's
/// `RequestConfirmation`/`RequestPasskey` to the client as `pairing-request`
/// events, the client answers with `AnswerPairing`; with no client attached
/// the request is refused at once, unanswered it is canceled at its bound.
@Suite(.serialized, .timeLimit(.minutes(2))) struct APIPairingRequestTests {
    /// The pairing-request events the client received: (request, kind, passkey).
    static func requests(_ client: APIClient) -> [(UInt64, String, Int?)] {
        client.events.filter { $0.kind == "pairing-request" }.compactMap { event in
            guard let object = try? JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any],
                  let body = object["pairingRequest"] as? [String: Any],
                  let request = body["request"] as? Int, let kind = body["kind"] as? String else { return nil }
            return (UInt64(request), kind, body["passkey"] as? Int)
        }
    }

    /// `PairWith` in a task: the D-Bus error name, nil when it paired.
    static func pairWith(_ client: APIClient, _ central: ObjectPath, _ capability: String) -> Task<String?, Never> {
        Task {
            do {
                // Longer than APIClient's 10 s: an unanswered request takes 20 s.
                _ = try await client.connection.call(destination: "org.relink", path: central, interface: "org.relink.Central1", method: "PairWith",
                                                     arguments: [.string(Harness.lockAddress), .string(capability)], timeout: .seconds(40))
                return nil
            } catch let error as DBusError { return error.name.rawValue + ": " + error.message } catch { return "\(error)" }
        }
    }

    static func connected(_ h: Harness) async throws -> (APIClient, ObjectPath) {
        let client = try await APIClient.connect(h.bench.busAddress)
        let (central, _, _) = try await client.register(Harness.id)
        try await client.central(central, "Connect", [
            .string(Harness.lockAddress), APIClient.options(["services": .array(.string, [.string(Harness.lockService)])]),
        ])
        try await h.waitForEvents("connected", count: 1)
        return (client, central)
    }

    @Test func aConfirmationIsAnsweredByTheClientAfterAnUnansweredOneAndOneWithNoClientFailed() async throws {
        try await Harness.with { h in
            let (client, central) = try await Self.connected(h)
            defer { client.close() }
            try await h.bench.setPairingMethod("lock", "confirmation", passkey: 123_456)

            // No client attached: refused at once, no event. (KeyboardDisplay
            // here, DisplayYesNo below: relinkd registers its agent again.)
            try await client.central(central, "Unwatch")
            let alone = await Self.pairWith(client, central, "KeyboardDisplay").value
            #expect(alone?.hasPrefix("org.relink.Error.AuthenticationFailed") == true, "\(alone ?? "paired")")
            #expect(Self.requests(client).isEmpty)
            #expect(try await !APIPairingTests.bluez(h, "Paired"))

            // Attached, but nobody answers: canceled at the 20 s bound.
            try await client.central(central, "Watch", [.uint64(0)])
            let unanswered = await Self.pairWith(client, central, "DisplayYesNo").value
            #expect(unanswered?.contains("not answered") == true, "\(unanswered ?? "paired")")
            let first = try #require(Self.requests(client).first?.0, "the unanswered request reached the client")
            #expect(try await !APIPairingTests.bluez(h, "Paired"))

            // Answered: numeric comparison with the passkey the lock shows.
            let pairing = Self.pairWith(client, central, "DisplayYesNo")
            try await eventually(timeout: .seconds(30), "a second pairing-request") { Self.requests(client).contains { $0.0 != first } }
            let (request, kind, passkey) = try #require(Self.requests(client).last { $0.0 != first })
            #expect(kind == "confirmation" && passkey == 123_456)
            try await client.central(central, "AnswerPairing", [.uint64(request), .boolean(true), .uint32(0)])
            let answered = await pairing.value
            #expect(answered == nil, "\(answered ?? "")")
            #expect(try await APIPairingTests.bluez(h, "Paired"))
        }
    }

    @Test func aPasskeyTypedByTheClientPairsTheLock() async throws {
        try await Harness.with { h in
            let (client, central) = try await Self.connected(h)
            defer { client.close() }
            try await h.bench.setPairingMethod("lock", "passkey", passkey: 654_321)
            let pairing = Self.pairWith(client, central, "KeyboardDisplay")
            try await eventually(timeout: .seconds(30), "a pairing-request") { !Self.requests(client).isEmpty }
            let (request, kind, passkey) = try #require(Self.requests(client).first)
            #expect(kind == "passkey" && passkey == nil)
            try await client.central(central, "AnswerPairing", [.uint64(request), .boolean(true), .uint32(654_321)])
            let answered = await pairing.value
            #expect(answered == nil, "\(answered ?? "")")
            #expect(try await APIPairingTests.bluez(h, "Paired"))
        }
    }

    @Test func aRequestLeftByASIGKILLedRelinkdCannotBeAnsweredAndTheNextPairingWorks() async throws {
        try await Harness.with { h in
            let (client, central) = try await Self.connected(h)
            try await h.bench.setPairingMethod("lock", "confirmation", passkey: 777_777)
            let interrupted = Self.pairWith(client, central, "DisplayYesNo")
            try await eventually(timeout: .seconds(30), "a pairing-request") { !Self.requests(client).isEmpty }
            let (old, _, _) = try #require(Self.requests(client).first)
            h.killRelinkd()
            _ = await interrupted.value
            client.close()
            #expect(try await !APIPairingTests.bluez(h, "Paired"), "the pairing ended with relinkd")

            try await h.startRelinkd()
            let again = try await APIClient.connect(h.bench.busAddress)
            defer { again.close() }
            let (central2, _, _) = try await again.register(Harness.id)
            try await eventually(timeout: .seconds(30), "the old request replayed") { Self.requests(again).contains { $0.0 == old } }
            do {
                try await again.central(central2, "AnswerPairing", [.uint64(old), .boolean(true), .uint32(0)])
                Issue.record("the old relinkd's request was answered")
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.relink.Error.UnknownRequest", "\(error)")
            }
            try await eventually(timeout: .seconds(30), "the link restored") { try await h.lockConnectedOnBlueZ() }
            let pairing = Self.pairWith(again, central2, "DisplayYesNo")
            try await eventually(timeout: .seconds(30), "a new pairing-request") { Self.requests(again).contains { $0.0 != old } }
            let (request, _, passkey) = try #require(Self.requests(again).last { $0.0 != old })
            #expect(passkey == 777_777)
            try await again.central(central2, "AnswerPairing", [.uint64(request), .boolean(true), .uint32(0)])
            let answered = await pairing.value
            #expect(answered == nil, "\(answered ?? "")")
            #expect(try await APIPairingTests.bluez(h, "Paired"))
        }
    }
}
