import BenchSupport
import DBus
import Foundation
import Testing

/// `Connect`'s `pairing_capability` end to end (issue 24): the bench's
/// encrypted lock demands a passkey (BlueZoo patches 22 and 26); the client
/// never calls `Pair`: its `Read` is refused, relinkd pairs on demand with
/// the intent's capability, the lock's passkey request reaches the client
/// as a `pairing-request` event, the client's answer pairs the lock and the
/// read is served. The capability is stored with the intent: it holds
/// after a relinkd SIGKILL. A refused answer is `AuthenticationFailed`.
@Suite(.serialized, .timeLimit(.minutes(2))) struct APIPairingCapabilityTests {
    typealias Requests = APIPairingRequestTests
    static let passkey: UInt32 = 246_810

    static func connect(_ client: APIClient, _ central: ObjectPath, capability: String) async throws {
        _ = try await client.central(central, "Connect", [.string(Harness.lockAddress), APIClient.options([
            "services": .array(.string, [.string(Harness.lockService)]), "pairing_capability": .string(capability),
        ])])
    }

    /// `Read` of the lock's state with a bound longer than a pairing's:
    /// the text read, or "error " and the D-Bus error's name.
    static func read(_ client: APIClient, _ central: ObjectPath) async -> String {
        do {
            let reply = try await client.connection.call(
                destination: "org.relink", path: central, interface: "org.relink.Central1", method: "Read",
                arguments: [.string(Harness.lockAddress), .string(Harness.lockService), .string(Harness.lockState)], timeout: .seconds(40))
            let bytes = try reply.decode([UInt8].self)
            return String(decoding: bytes, as: UTF8.self)
        } catch let error as DBusError { return "error " + error.name.rawValue } catch {
            return "error \(error)"
        }
    }

    /// Answers every `pairing-request` the client receives (each once) with
    /// `accept` and the lock's passkey, until cancelled; returns how many.
    static func answering(_ client: APIClient, _ central: ObjectPath, accept: Bool) -> Task<Int, Never> {
        Task {
            var answered: Set<UInt64> = []
            while !Task.isCancelled {
                for (request, _, _) in Requests.requests(client) where answered.insert(request).inserted {
                    _ = try? await client.central(central, "AnswerPairing", [.uint64(request), .boolean(accept), .uint32(Self.passkey)])
                }
                try? await Task.sleep(for: .milliseconds(20))  // the answerer's own poll, not a test's wait
            }
            return answered.count
        }
    }

    @Test func aPasskeyLockIsPairedOnDemandThroughTheClientsAnswerWithTheCapabilityStoredAcrossASIGKILL() async throws {
        try await Harness.with(bench: APIPairingOnDemandTests.encrypted) { h in
            try await h.bench.setPairingMethod("lock", "passkey", passkey: Int(Self.passkey))
            let first = try await APIClient.connect(h.bench.busAddress)
            let (central, _, _) = try await first.register(Harness.id)
            try await Self.connect(first, central, capability: "KeyboardDisplay")
            try await h.waitForEvents("connected", count: 1)

            // relinkd SIGKILLed before any pairing: the capability must come from the store.
            h.killRelinkd()
            first.close()
            try await h.startRelinkd()
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (restored, _, _) = try await client.register(Harness.id)
            let answerer = Self.answering(client, restored, accept: true)
            defer { answerer.cancel() }
            try await h.bench.push("lock", state: "unlocked")
            // Until relinkd has the link again a read is NotConnected; then it pairs and is served.
            try await eventually(timeout: .seconds(60), "the read served after pairing on demand") {
                await Self.read(client, restored) == "unlocked"
            }
            let kinds = Requests.requests(client).map(\.1)
            #expect(kinds == ["passkey"], "one passkey request, answered by the client: \(kinds)")
            #expect(try await APIPairingTests.bluez(h, "Paired"))
            #expect(try await APIPairingTests.bluez(h, "Trusted"))
            let log = try String(contentsOfFile: h.directory + "/relinkd-2.log", encoding: .utf8)
            #expect(log.contains("pairing-on-demand") && log.contains("paired and trusted"))
        }
    }

    @Test func aRefusedAnswerIsAuthenticationFailedAndNothingIsPaired() async throws {
        try await Harness.with(bench: APIPairingOnDemandTests.encrypted) { h in
            try await h.bench.setPairingMethod("lock", "passkey", passkey: Int(Self.passkey))
            let client = try await APIClient.connect(h.bench.busAddress)
            defer { client.close() }
            let (central, _, _) = try await client.register(Harness.id)
            do {
                try await Self.connect(client, central, capability: "Keyboard")
                Issue.record("an unknown capability was taken")
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.relink.Error.InvalidArguments" && error.message.contains("KeyboardDisplay"), "\(error)")
            }
            try await Self.connect(client, central, capability: "KeyboardOnly")
            try await h.waitForEvents("connected", count: 1)
            let answerer = Self.answering(client, central, accept: false)
            defer { answerer.cancel() }
            let refused = await Self.read(client, central)
            #expect(refused == "error org.relink.Error.AuthenticationFailed", "\(refused)")
            #expect(Requests.requests(client).map(\.1) == ["passkey"])
            #expect(try await !APIPairingTests.bluez(h, "Paired"))
        }
    }
}
