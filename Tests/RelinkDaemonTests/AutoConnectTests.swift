import Foundation
import BenchSupport
import DBus
import Testing

/// Pending until cancelled, between rounds: relinkd holds the lock through
/// bluetoothd's background auto-connect (a GattProfile1 with the intent's
/// services), so a lock that comes back while relinkd is backing off is
/// connected at once, not at the next round. The bench's bluetoothd
/// auto-connects as BlueZ does (bench/README.md, patch 11).
@Suite(.serialized, .timeLimit(.minutes(3))) struct AutoConnectTests {
    /// Only the known-identifier strategy, so each round is one Connect
    /// (the bench's connect timeout is 1 s) and the backoff comes quickly.
    /// The lock is made known to bluetoothd first by another client's
    /// Connect and Disconnect.
    static let knownOnly: [DBusValue.DictionaryEntry] = [
        .init(.string("strategies"), .variant(.array(.string, [.string("known-identifier")]))),
    ]

    /// Waits until relinkd enters its `n`-th backoff since the call (status
    /// polled every 20 ms; the rounds between are at least 1 s long).
    func waitForBackoff(_ h: Harness, number n: Int) async throws {
        var entered = 0
        var was = false
        try await eventually(timeout: .seconds(90), "backoff number \(n)") {
            let now = (try? await h.control.connectionState(Harness.id)) == "backing-off"
            if now && !was { entered += 1 }
            was = now
            return entered >= n
        }
    }

    /// Makes the lock known to bluetoothd, registers and connects it with
    /// only the known-identifier strategy, runs `whileConnected`, then takes
    /// the lock out of range and waits for the drop.
    func connectKnownOnlyThenLoseTheLock(_ h: Harness, services: [String] = [Harness.lockService],
                                         whileConnected: () async throws -> Void) async throws {
        try await h.connectLockAsAnotherClient()
        _ = try await h.control.connection.call(destination: "org.bluez", path: Harness.lockPath, interface: "org.bluez.Device1", method: "Disconnect")
        try await h.control.register(Harness.id)
        try await h.control.connect(Harness.id, Harness.lockAddress, services: services, extra: Self.knownOnly)
        try await whileConnected()
        try await h.bench.outOfRange("lock")
        try await h.waitForEvents("disconnected", count: 1)
    }

    /// Watches for 1 s, the lock at `path` back in range, that nobody links
    /// it. A real-time wait (Tests/README.md): what is tested is that
    /// bluetoothd's auto-connect does *not* happen, and only time shows it.
    func observeNotAutoConnected(_ h: Harness, _ path: ObjectPath) async throws {
        try await observeQuietly(for: .seconds(1), "\(path) back in range and not auto-connected") {
            (try? await h.lockConnectedOnBlueZ(path)) == false
        }
    }

    /// Subscribes to the lock state and waits for the first link.
    func subscribeAndWaitForTheLink(_ h: Harness) async throws {
        try await h.control.subscribe(Harness.id, Harness.lockAddress, Harness.lockService, Harness.lockState)
        try await h.waitForEvents("connected", count: 1)
    }

    /// Brings the lock back once relinkd is in its `backoff`-th backoff and
    /// expects the second link to come from background auto-connect.
    func expectBackByAutoConnect(_ h: Harness, inBackoff backoff: Int, _ otherwise: String) async throws {
        try await waitForBackoff(h, number: backoff)
        try await h.bench.inRange("lock")
        try await h.waitForEvents("connected", count: 2)
        let routes = try await h.events("connected").map(\.route)
        #expect(routes == ["knownIdentifier", "backgroundAutoConnect"], "\(otherwise)")
    }

    @Test func lockBackInRangeDuringBackoffIsAutoConnectedAndNotificationsFlow() async throws {
        try await Harness.with { h in
            try await connectKnownOnlyThenLoseTheLock(h) {
                try await h.control.subscribe(Harness.id, Harness.lockAddress, Harness.lockService, Harness.lockState)
                try await h.waitForEvents("connected", count: 1)
                try await h.push([30])
            }
            // The third backoff is 4 s (±20 %): the next round is at least
            // 3.2 s away when the lock comes back.
            try await waitForBackoff(h, number: 3)
            try await h.bench.inRange("lock")
            let back = ContinuousClock.now
            try await h.waitForEvents("connected", count: 2)
            print("figure: lock back in range during a 4 s backoff to connected by auto-connect: \(ContinuousClock.now - back) (event polled)")
            let routes = try await h.events("connected").map(\.route)
            #expect(routes == ["knownIdentifier", "backgroundAutoConnect"], "routes \(routes), back after \(ContinuousClock.now - back)")
            try await h.waitUntilNotificationsFlow()
            try await h.push([31, 32])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [30, 31, 32])
            try await h.expectNoDuplicates()
        }
    }

    /// An intent that names no services is held by the services of its
    /// subscriptions: the lock, back during a backoff, is auto-connected.
    @Test func anIntentWithoutServicesIsHeldByItsSubscriptionsServices() async throws {
        try await Harness.with { h in
            try await connectKnownOnlyThenLoseTheLock(h, services: []) { try await subscribeAndWaitForTheLink(h) }
            try await expectBackByAutoConnect(h, inBackoff: 3, "no services named: the lock waited for the next round")
            try await h.waitUntilNotificationsFlow()
        }
    }

    /// After a SIGKILL of relinkd (its profile ended with its bus
    /// connection), the restored pending intent is held by auto-connect
    /// again.
    @Test func afterARestartThePendingLockIsHeldByAutoConnectAgain() async throws {
        try await Harness.with { h in
            try await connectKnownOnlyThenLoseTheLock(h) { try await subscribeAndWaitForTheLink(h) }
            h.killRelinkd()
            try await h.startRelinkd()
            try await expectBackByAutoConnect(h, inBackoff: 3, "after the restart the lock waited for the next round")
            try await h.waitUntilNotificationsFlow()
        }
    }

    /// When relinkd's own connect step (20 s) times out before bluetoothd's
    /// Connect does (newer kernels wait 40 s), relinkd cancels it with
    /// `Disconnect()`, which turns the device's auto-connect off in BlueZ.
    /// relinkd registers the profile anew afterwards, so a lock back during
    /// the backoff that follows is still connected by auto-connect, not
    /// left for the next round's Connect.
    @Test func autoConnectIsRenewedAfterRelinkdCancelsATimedOutConnect() async throws {
        try await Harness.with { h in
            try await connectKnownOnlyThenLoseTheLock(h) { try await h.waitForEvents("connected", count: 1) }
            // Set after the first connection, so only the later rounds wait.
            try await h.bench.send(.setTiming(connectTimeout: 40, supervisionTimeout: 0.5))
            // The first backoff comes from the round whose Connect failed at
            // once (1 s); each later round's Connect hangs until relinkd's
            // 20 s step timeout cancels it, then comes a backoff. The lock
            // comes back in the third (4 s, at least 3.2 s): in the second
            // (at least 1.6 s) a loaded CI machine once let the next round's
            // Connect win over a renewed auto-connect.
            try await expectBackByAutoConnect(h, inBackoff: 3, "the lock waited for the next round: auto-connect stayed off after relinkd's Disconnect")
            try await h.expectNoDuplicates()
        }
    }

    /// Whether the bench's bluetoothd has the lock on its kernel auto-connect
    /// list (a profile offering its service is registered, and no
    /// `Disconnect()` turned it off).
    func lockOnTheAutoConnectList(_ h: Harness, _ path: ObjectPath = Harness.lockPath) async throws -> Bool {
        let reply = try await h.control.connection.call(destination: "org.bluez", path: try ObjectPath("/org/relinkbench"), interface: "org.relinkbench.Zoo1",
                                                        method: "GetState", timeout: .seconds(10))
        guard let json = reply.body.first?.stringValue,
              let state = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let adapters = state["adapters"] as? [String: Any], let adapter = adapters["/org/bluez/hci0"] as? [String: Any],
              let devices = adapter["devices"] as? [String: Any], let lock = devices[path.rawValue] as? [String: Any],
              let held = lock["auto_connect"] as? Bool else {
            throw BenchError.badReply("GetState: no auto_connect for \(path)")
        }
        return held
    }

    /// The lock is held by auto-connect from the first lookup after a drop
    /// that finds it, not from the first backoff: in the first round, past
    /// its failed Connect and scanning, bluetoothd already has it on its
    /// auto-connect list, so a lock back then is connected at its first
    /// advertisement (a scan step needs one to find it and one to connect).
    @Test func theLockIsHeldByAutoConnectFromTheFirstRoundAfterADrop() async throws {
        try await Harness.with { h in
            try await h.control.register(Harness.id)
            try await h.control.connect(Harness.id, Harness.lockAddress, services: [Harness.lockService])
            try await subscribeAndWaitForTheLink(h)
            #expect(try await lockOnTheAutoConnectList(h) == false, "nothing asked for auto-connect while the link was up")
            try await h.bench.outOfRange("lock")
            try await h.waitForEvents("disconnected", count: 1)
            // The round's Connect fails after the bench's 1 s; the adoption
            // step finds nothing; the scan step waits up to 15 s.
            try await eventually(timeout: .seconds(10), "the first round's scan step") {
                (try? await h.control.connectionState(Harness.id)) == "trying-scan"
            }
            #expect(try await lockOnTheAutoConnectList(h), "in the first round the lock was not held by auto-connect")
            try await h.bench.inRange("lock")
            try await h.waitForEvents("connected", count: 2)
            try await h.waitUntilNotificationsFlow()
            try await h.expectNoDuplicates()
        }
    }

    /// BlueZ auto-connects by service, not by device. With another lock of
    /// the same model still held, a lock whose intent is cancelled while it
    /// is away would be linked by bluetoothd when it comes back, and held
    /// for nobody. relinkd takes it off the list with `Disconnect()`, and
    /// again after a registration puts it back (here, a restart's).
    @Test func aCancelledLockIsNotAutoConnectedWhileAnotherOfItsModelIsHeld() async throws {
        let options = BenchOptions(peripherals: [.lock(), .lock("lock2"), .band()])
        try await Harness.with(bench: options) { h in
            let second = try #require(h.bench.info.peripherals["lock2"])
            let secondPath = try ObjectPath(second.devicePath)
            for path in [Harness.lockPath, secondPath] {  // known to bluetoothd
                try await h.connectLockAsAnotherClient(path)
                _ = try await h.control.connection.call(destination: "org.bluez", path: path, interface: "org.bluez.Device1", method: "Disconnect")
            }
            try await h.control.register(Harness.id)
            try await h.control.connect(Harness.id, Harness.lockAddress, services: [Harness.lockService])
            try await h.control.connect(Harness.id, second.address, services: [Harness.lockService], extra: Self.knownOnly)
            try await h.waitForEvents("connected", count: 2)
            try await h.bench.outOfRange("lock2")
            try await h.waitForEvents("disconnected", count: 1)
            #expect(try await lockOnTheAutoConnectList(h, secondPath), "the pending second lock is held by auto-connect")
            // Cancelled in a backoff (only the known-identifier strategy, so
            // the round ends when its Connect fails after the bench's 1 s):
            // no Connect of relinkd's is pending, whose cancelling
            // Disconnect would also take the lock off the list.
            try await eventually(timeout: .seconds(10), "the second lock's backoff") {
                let connections = (try? await h.control.connections()) ?? []
                return connections.contains { $0["address"] as? String == second.address && $0["state"] as? String == "backing-off" }
            }
            try await h.control.call("Cancel", [.string(Harness.id), .string(second.address)])
            try await eventually(timeout: .seconds(5), "the cancelled lock off the auto-connect list") {
                (try? await lockOnTheAutoConnectList(h, secondPath)) == false
            }
            try await h.bench.inRange("lock2")
            try await observeNotAutoConnected(h, secondPath)
            #expect(try await h.lockConnectedOnBlueZ(secondPath) == false, "bluetoothd linked the cancelled lock")

            // A restart registers the profile again (2 s after READY), which
            // puts every known device of the model back on the list.
            try await h.bench.outOfRange("lock2")
            h.killRelinkd()
            try await eventually(timeout: .seconds(5), "the dead relinkd's profile gone") {
                (try? await lockOnTheAutoConnectList(h)) == false
            }
            try await h.startRelinkd()
            try await eventually(timeout: .seconds(10), "the restarted relinkd's registration") {
                (try? await lockOnTheAutoConnectList(h)) == true
            }
            try await eventually(timeout: .seconds(5), "the cancelled lock off the auto-connect list again") {
                (try? await lockOnTheAutoConnectList(h, secondPath)) == false
            }
            try await h.bench.inRange("lock2")
            try await observeNotAutoConnected(h, secondPath)
            #expect(try await h.lockConnectedOnBlueZ(secondPath) == false, "after the restart bluetoothd linked the cancelled lock")
            #expect(try await h.lockConnectedOnBlueZ(), "the held lock stays linked")
        }
    }

    /// An operator's first question, answered by `Status`: while the lock
    /// is away, its connection shows the attempt and the last error (the
    /// link lost, then the classified Connect failure); once the link is
    /// back, no error.
    @Test func statusSaysWhyALinkIsDown() async throws {
        try await Harness.with { h in
            try await connectKnownOnlyThenLoseTheLock(h) { try await h.waitForEvents("connected", count: 1) }
            func entry() async throws -> [String: Any] { try #require(try await h.control.connections().first) }
            // At once: the link went down.
            #expect((try await entry()["lastError"] as? String)?.contains("LinkLost") == true)
            try await waitForBackoff(h, number: 1)
            let down = try await entry()
            let error = try #require(down["lastError"] as? String, "no lastError while the lock is away: \(down)")
            #expect(error.contains("le-connection-abort-by-local"), "\(error)")
            #expect((down["attempt"] as? Int ?? 0) >= 2)
            let at = try #require(down["lastErrorAtMs"] as? Int64 ?? (down["lastErrorAtMs"] as? Int).map(Int64.init))
            #expect(abs(Double(at) / 1000 - Date().timeIntervalSince1970) < 60)
            try await h.bench.inRange("lock")
            try await h.waitForEvents("connected", count: 2)
            #expect(try await entry()["lastError"] == nil, "the error outlived the link's return")
        }
    }

    /// A cancelled intent leaves no auto-connect behind: the lock, back in
    /// range, stays disconnected.
    @Test func cancelledIntentEndsBackgroundAutoConnect() async throws {
        try await Harness.with { h in
            try await connectKnownOnlyThenLoseTheLock(h) { try await h.waitForEvents("connected", count: 1) }
            try await waitForBackoff(h, number: 1)
            try await h.control.call("Cancel", [.string(Harness.id), .string(Harness.lockAddress)])
            try await h.bench.inRange("lock")
            try await observeNotAutoConnected(h, Harness.lockPath)
            #expect(try await h.events("connected").count == 1)
            #expect(try await h.lockConnectedOnBlueZ() == false, "the lock was auto-connected after Cancel")
        }
    }
}
