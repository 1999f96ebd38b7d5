import BenchSupport
import DBus
import Foundation
import RelinkAPI
import RelinkModel
import Testing

/// Issue 24's "Done when" on the mock bench: a lock that needs encryption
/// and rotates its address is paired once, then restored after every
/// restart kind of the restart-survival suite (and after its client
/// program left) without pairing again. One bench per restart kind, with
/// four encrypted locks that advertise from resolvable private addresses
/// (BlueZoo patches 22 and 27), one per link state (each on its own
/// restore identifier), so that one restart plays all four states:
///
/// * subscribed: the link up and notifying;
/// * pending: the lock out of range, relinkd looking for it (a scan or a
///   backoff between rounds);
/// * connecting: the lock out of range with a 4 s connect timeout, the
///   restart played while relinkd's `Device1.Connect` is in flight;
/// * scanning: an intent with the `scan` strategy only, the lock out of
///   range, relinkd scanning for it: it finds the lock under a new RPA
///   through the identity bluetoothd resolves. (Not "before the lock was
///   ever found": a lock must have been found to be paired.)
///
/// Each lock is connected by the RPA the program saw (`address_type
/// random`, no match rule) and paired on demand once at the start (its
/// subscription to the encrypted state is refused unpaired, BlueZoo patch
/// 22); relinkd then follows it to its identity (store v11: bonded, at its
/// identity). Every lock takes a new RPA after the restart (a rotation,
/// and a power-on for each away lock as it comes back in range; a
/// restarted bluetoothd gives every lock a new one too). Each link and
/// subscription comes back, the values pushed after the restart reach the
/// outbox once and in order, relinkd still holds the identity and the
/// bond, bluetoothd still has the bond (patch 23) and `Trusted` (patch
/// 28), and nothing paired again: BlueZoo counted one `Device1.Pair` call
/// per lock in all, by its identity (a count kept in the bench directory
/// across BlueZoo restarts), and relinkd's logs have one `paired` entry
/// per lock.
@Suite(.serialized, .timeLimit(.minutes(3))) struct EncryptedRestartMatrixTests {
    /// What an intent was doing when the restart came.
    /// (In this order: the connecting lock is sent away last, just before the restart.)
    enum LinkState: String, CaseIterable, Sendable {
        case subscribed, pending, scanning, connecting
    }

    /// The restart kinds of the restart-survival suite, and the client
    /// program gone: a client attached to every identifier leaves the bus
    /// without a word (its connection closed: what the bus sees of a
    /// SIGKILLed program; the harness's clients run in the test process)
    /// and a new one registers them again.
    enum RestartKind: String, CaseIterable, Sendable {
        case relinkdSIGKILL, relinkdSIGTERM, reboot, bluetoothdSIGKILL, bluetoothdSIGTERM, centralPowerCycle, clientGone
    }

    /// The bench's locks, in one place: the encrypted lock of issue 24 that
    /// rotates its address.
    static var bench: BenchOptions {
        var options = BenchOptions(peripherals: LinkState.allCases.indices.map { .lock($0 == 0 ? "lock" : "lock\($0 + 1)") })
        options.encryptedLocks = true
        options.lockPrivacy = true
        return options
    }

    /// The lock (and identifier) that plays `state` on the bench.
    static func lock(_ state: LinkState, on bench: Bench) throws -> BenchLock {
        let index = LinkState.allCases.firstIndex(of: state) ?? 0
        let name = index == 0 ? "lock" : "lock\(index + 1)"
        guard let address = bench.info.peripherals[name]?.address else { throw BenchError.badReply("no \(name) on the bench") }
        return BenchLock(name: name, address: address, id: "org.example.matrix.\(state.rawValue)")
    }

    @Test(arguments: RestartKind.allCases)
    func theEncryptedLockIsRestoredInEveryStateWithoutPairingAgain(kind: RestartKind) async throws {
        try await Harness.with(bench: Self.bench) { h in
            let started = ContinuousClock.now
            let locks = try LinkState.allCases.map { ($0, try Self.lock($0, on: h.bench)) }
            var peripherals: [BenchLock: ObjectPath] = [:]
            for (state, lock) in locks { peripherals[lock] = try await Self.pairOnDemand(h, lock, scanOnly: state == .scanning) }
            for (state, lock) in locks { #expect(try await Self.pairCalls(h, lock) == 1, "\(state): paired once on demand") }
            for (state, lock) in locks where state != .subscribed { try await Self.sendAway(h, lock, state) }
            var linkEventsBefore: [BenchLock: Int] = [:]
            for (_, lock) in locks { linkEventsBefore[lock] = try await Self.linkAddresses(h, lock).count }

            let client = try await Self.play(kind, h, locks.map(\.1))
            defer { client?.close() }

            // Every lock advertises from a new RPA now; each away lock comes back with it.
            for (state, lock) in locks {
                _ = try await h.rotate(lock.name)
                if state != .subscribed { try await h.bench.inRange(lock.name) }
            }
            for (state, lock) in locks {
                // The link first (a pending lock may be in a backoff), then the probes.
                try await eventually(timeout: .seconds(60), "\(state): \(lock.name) linked again after \(kind)") {
                    (try? await h.lockConnectedOnBlueZ(try await h.deviceObject(showing: lock.address))) == true
                }
                try await h.waitUntilNotificationsFlow(lock, timeout: .seconds(60))
                try await h.push([11, 12], lock)
                try await h.waitUntilHandled(lock)
                #expect(try await h.testValues(lock) == [10, 11, 12], "\(state) after \(kind): every value once, in order")
                try await h.expectNoDuplicates(lock)
                let device = try await h.deviceObject(showing: lock.address)
                #expect(try await APIPairingTests.bluez(h, "Paired", of: device), "\(state) after \(kind): the bond is still there")
                #expect(try await APIPairingTests.bluez(h, "Trusted", of: device))
                #expect(try await Self.pairCalls(h, lock) == 1, "\(state) after \(kind): no second Device1.Pair")
                #expect(try await Self.intent(h, lock) == .bonded(at: lock.address),
                        "\(state) after \(kind): relinkd holds the identity, bonded (Status)")
                if let path = peripherals[lock] { try await Self.expectRelinkdShowsTheBond(h, path, "\(state) after \(kind)") }
                // The program is told the identity, never an old RPA; a link that went down (or was adopted) is told.
                if state != .subscribed || kind != .clientGone {
                    try await eventually(timeout: .seconds(30), "\(state) after \(kind): a connected or restored event") {
                        ((try? await Self.linkAddresses(h, lock).count) ?? 0) > linkEventsBefore[lock] ?? 0
                    }
                }
                let after = try await Self.linkAddresses(h, lock).dropFirst(linkEventsBefore[lock] ?? 0)
                #expect(after.allSatisfy { $0 == "\(lock.address) public" }, "\(state) after \(kind): connected/restored at the identity: \(after)")
            }
            #expect(try await Self.allPairCalls(h) == locks.count, "one Device1.Pair per lock, at whatever address")
            #expect(try Self.pairedEntries(h) == locks.count, "relinkd paired each lock once, before the restart")
            print("figure: encrypted restart matrix, \(kind.rawValue), 4 link states: \(ContinuousClock.now - started)")
        }
    }

    /// Registers `lock.id`, connects the lock by the RPA it advertises now
    /// (as a program that saw it in a scan: `address_type random`, its
    /// services only, no match rule) and subscribes to its encrypted state;
    /// relinkd pairs on demand; value 10 arrives; relinkd follows the lock
    /// to its identity. Returns the lock's `Peripheral1` object.
    static func pairOnDemand(_ h: Harness, _ lock: BenchLock, scanOnly: Bool) async throws -> ObjectPath {
        let rpa = try await h.rotate(lock.name)
        let client = try await APIClient.connect(h.bench.busAddress)
        defer { client.close() }
        let (central, _, _) = try await client.register(lock.id)
        var options: [String: DBusValue] = ["services": .array(.string, [.string(Harness.lockService)]), "address_type": .string("random")]
        if scanOnly { options["strategies"] = .array(.string, [.string("scan")]) }
        let reply = try await client.central(central, "Connect", [.string(rpa), APIClient.options(options)])
        guard case .objectPath(let peripheral)? = reply.body.first else { throw BenchError.badReply("Connect: \(reply.body)") }
        _ = try await client.central(central, "Subscribe", [.string(rpa), .string(Harness.lockService), .string(Harness.lockState)])
        try await h.waitForEvents("connected", count: 1, of: lock.id, timeout: .seconds(60))
        try await h.waitUntilNotificationsFlow(lock, timeout: .seconds(60))
        try await h.push([10], lock)
        #expect(try await APIPairingTests.bluez(h, "Paired", of: try await h.deviceObject(showing: lock.address)), "\(lock.name) paired on demand")
        try await eventually(timeout: .seconds(30), "relinkd to follow \(lock.name) from \(rpa) to its identity") {
            (try? await Self.intent(h, lock)) == .bonded(at: lock.address)
        }
        return peripheral
    }

    /// The address (and its type) of each `connected` and `restored` event
    /// in the lock's identifier's outbox, in order: "ADDRESS type".
    static func linkAddresses(_ h: Harness, _ lock: BenchLock) async throws -> [String] {
        try await h.control.events(lock.id).filter { $0.kind == "connected" || $0.kind == "restored" }.map { event in
            let object = try JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any]
            let address = (object?[event.kind] as? [String: Any])?["address"] as? [String: Any]
            return "\(address?["address"] as? String ?? "none") \(address?["type"] as? String ?? "none")"
        }
    }

    /// What relinkd's `Status` shows of an intent's address and bond (store v11).
    struct Intent: Equatable, CustomStringConvertible {
        var address: String?
        var bonded: Bool?
        var identityAddress: Bool?
        /// Bonded, at this identity address.
        static func bonded(at identity: String) -> Intent { Intent(address: identity, bonded: true, identityAddress: true) }
        var description: String { "\(address ?? "no address") bonded \(bonded.map(String.init) ?? "-") identity \(identityAddress.map(String.init) ?? "-")" }
    }

    /// The lock's identifier's intent as relinkd's `Status` shows it.
    static func intent(_ h: Harness, _ lock: BenchLock) async throws -> Intent {
        let ids = try await h.control.status()["identifiers"] as? [[String: Any]] ?? []
        let entry = (ids.first { $0["id"] as? String == lock.id }?["connections"] as? [[String: Any]])?.first
        return Intent(address: entry?["address"] as? String, bonded: entry?["bonded"] as? Bool,
                      identityAddress: entry?["identityAddress"] as? Bool)
    }

    /// relinkd's own view agrees with bluetoothd's storage (issue 24 item 3):
    /// `Peripheral1.Paired`, `Bonded` and `Trusted` all true.
    static func expectRelinkdShowsTheBond(_ h: Harness, _ peripheral: ObjectPath, _ what: String) async throws {
        let client = try await APIClient.connect(h.bench.busAddress)
        defer { client.close() }
        do {
            try await eventually(timeout: .seconds(10), "\(what): Peripheral1 shows the bond") {
                (try? await APIPairingTests.bond(client, peripheral)) == [true, true, true]
            }
        } catch {
            Issue.record("\(what): Peripheral1 Paired/Bonded/Trusted \((try? await APIPairingTests.bond(client, peripheral)) ?? [])")
        }
    }

    /// Takes the lock out of range and waits until relinkd is in `state`
    /// for it. The connecting lock goes last: its 4 s connect timeout is
    /// the bench's, and the restart must come while its Connect is in flight.
    static func sendAway(_ h: Harness, _ lock: BenchLock, _ state: LinkState) async throws {
        if state == .connecting { try await h.bench.send(BenchCommand("set_timing", ["connect_timeout": .number(4)])) }
        try await h.bench.outOfRange(lock.name)
        try await h.waitForEvents("disconnected", count: 1, of: lock.id)
        switch state {
        case .connecting:
            try await eventually(timeout: .seconds(30), "relinkd connecting to \(lock.name)") {
                (try? await h.control.connectionState(lock.id)) == "connecting"
            }
        case .scanning, .pending:
            try await h.waitUntilLookingForTheLock(lock)
        case .subscribed:
            break
        }
    }

    /// Plays the restart; for `clientGone`, returns the new client (the caller closes it).
    static func play(_ kind: RestartKind, _ h: Harness, _ locks: [BenchLock]) async throws -> APIClient? {
        switch kind {
        case .relinkdSIGKILL:
            h.killRelinkd()
            try await h.startRelinkd()
        case .relinkdSIGTERM:
            #expect(h.stopRelinkd() == 0, "relinkd exits 0 on SIGTERM")
            try await h.startRelinkd()
        case .reboot:
            // The machine goes down: relinkd and bluetoothd die; both start again on the same state.
            h.killRelinkd()
            try await h.bench.send(BenchCommand("restart_bluez", ["signal": .string("KILL")]))
            try await h.startRelinkd()
        case .bluetoothdSIGKILL:
            try await h.bench.send(BenchCommand("restart_bluez", ["signal": .string("KILL")]))
        case .bluetoothdSIGTERM:
            try await h.bench.send(BenchCommand("restart_bluez", ["signal": .string("TERM")]))
        case .centralPowerCycle:
            try await h.bench.powerCycleCentral(offSeconds: 0.5)
        case .clientGone:
            let gone = try await APIClient.connect(h.bench.busAddress)
            for lock in locks { _ = try await gone.register(lock.id) }
            gone.close()
            let again = try await APIClient.connect(h.bench.busAddress)
            for lock in locks { _ = try await again.register(lock.id) }
            return again
        }
        return nil
    }

    /// `Device1.Pair` calls BlueZoo saw for the lock (by its identity,
    /// whatever RPA its device showed) on the central's adapter, since the
    /// bench started (patch 28: across BlueZoo restarts).
    static func pairCalls(_ h: Harness, _ lock: BenchLock) async throws -> Int {
        try await centralPairCalls(h)[lock.address.uppercased()] ?? 0
    }

    /// Every `Device1.Pair` call on the central's adapter, whatever peer.
    static func allPairCalls(_ h: Harness) async throws -> Int {
        try await centralPairCalls(h).values.reduce(0, +)
    }

    /// The central adapter's `pair_calls` of `Zoo1.GetState`: peer -> calls.
    static func centralPairCalls(_ h: Harness) async throws -> [String: Int] {
        let reply = try await h.control.connection.call(destination: "org.bluez", path: try ObjectPath("/org/relinkbench"),
                                                        interface: "org.relinkbench.Zoo1", method: "GetState", timeout: .seconds(10))
        guard let json = reply.body.first?.stringValue,
              let state = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let calls = state["pair_calls"] as? [String: Any] else {
            throw BenchError.badReply("GetState: no pair_calls")
        }
        return calls[h.bench.info.central.address.uppercased()] as? [String: Int] ?? [:]
    }

    /// `paired` journal entries ("peripheral paired and trusted") in every
    /// relinkd log of the case.
    static func pairedEntries(_ h: Harness) throws -> Int {
        let logs = try FileManager.default.contentsOfDirectory(atPath: h.directory).filter { $0.hasPrefix("relinkd-") && $0.hasSuffix(".log") }
        return try logs.reduce(0) { count, name in
            let text = try String(contentsOfFile: h.directory + "/" + name, encoding: .utf8)
            return count + text.components(separatedBy: "peripheral paired and trusted").count - 1
        }
    }
}
