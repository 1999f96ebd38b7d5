import BenchSupport
import DBus
import Foundation
import Testing

/// bluetoothd restarted and the adapter power-cycled in the states the
/// other suites cover only for a SIGKILL of relinkd: while connecting,
/// while the scan strategy looks for the lock, and while scanning for a
/// restore identifier. relinkd reaches the same state by itself.
@Suite(.serialized, .timeLimit(.minutes(2))) struct BlueZLossStateTests {
    enum Loss { case bluetoothdRestart, powerCycle }

    func lose(_ loss: Loss, _ h: Harness) async throws {
        switch loss {
        case .bluetoothdRestart: try await h.bench.restartBlueZ()
        case .powerCycle: try await h.bench.powerCycleCentral(offSeconds: 0.5)
        }
    }

    /// The lock out of range with connects taking 4 s to fail; the loss
    /// hits while relinkd's Connect is outstanding.
    func whileConnecting(_ loss: Loss) async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([60])
            try await h.holdLockConnecting()
            try await lose(loss, h)
            try await h.waitUntilLookingForTheLock()
            #expect(try await h.control.connectionState(Harness.id) != "connected")
            try await h.bench.inRange("lock")
            try await h.waitForEvents("connected", count: 2, timeout: .seconds(60))
            try await h.waitUntilNotificationsFlow()
            try await h.push([61])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [60, 61])
            let values = try await h.notifiedValues()
            #expect(Set(values).count == values.count, "a value was delivered twice: \(values)")
            #expect(try await h.events("connected").count == 2, "one reconnection")
        }
    }

    @Test func bluetoothdRestartWhileConnectingConnectsWhenBackInRange() async throws {
        try await whileConnecting(.bluetoothdRestart)
    }

    @Test func adapterPowerCycleWhileConnectingConnectsWhenBackInRange() async throws {
        try await whileConnecting(.powerCycle)
    }

    /// The connection intent in its scan strategy (lock never seen, out of
    /// range) when the loss hits: relinkd scans again and connects by scan.
    func whileScanStrategy(_ loss: Loss) async throws {
        try await Harness.with { h in
            try await h.bench.outOfRange("lock")
            try await h.control.register(Harness.id)
            try await h.control.connect(Harness.id, Harness.lockAddress, services: [Harness.lockService])
            try await h.control.subscribe(Harness.id, Harness.lockAddress, Harness.lockService, Harness.lockState)
            try await eventually(timeout: .seconds(20), "relinkd to scan for the lock") {
                (try? await h.control.connectionState(Harness.id)) == "trying-scan"
            }
            try await lose(loss, h)
            try await eventually(timeout: .seconds(30), "discovery to be on again") {
                (try? await h.control.status()["discovering"] as? Bool) == true
            }
            try await h.bench.inRange("lock")
            try await h.waitForEvents("connected", count: 1, timeout: .seconds(60))
            try await h.waitUntilNotificationsFlow()
            try await h.push([1])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [1])
            let values = try await h.notifiedValues()
            #expect(Set(values).count == values.count, "a value was delivered twice: \(values)")
        }
    }

    @Test func bluetoothdRestartWhileInScanStrategyScansAgainAndConnects() async throws {
        try await whileScanStrategy(.bluetoothdRestart)
    }

    @Test func adapterPowerCycleWhileInScanStrategyScansAgainAndConnects() async throws {
        try await whileScanStrategy(.powerCycle)
    }

    /// A restore identifier's scan (heart rate) when the adapter is
    /// power-cycled: discovery is resumed and the band reported again.
    @Test func adapterPowerCycleWhileScanningResumesTheScan() async throws {
        try await Harness.with { h in
            try await h.control.register(Harness.id)
            try await h.control.call("Scan", [.string(Harness.id), .array(.string, [.string(Harness.heartRate)]), .boolean(false)])
            try await h.waitForEvents("discovered", count: 1, timeout: .seconds(15))
            try await h.observeNoMoreEvents("discovered", than: 1, for: .seconds(1))
            #expect(try await h.events("discovered").count == 1, "coalesced within a session")
            try await h.bench.powerCycleCentral(offSeconds: 0.5)
            try await h.waitForEvents("discovered", count: 2, timeout: .seconds(20))
            #expect(try await h.control.status()["discovering"] as? Bool == true, "discovery resumed after the power cycle")
            try await h.observeNoMoreEvents("discovered", than: 2, for: .seconds(2))
            #expect(try await h.events("discovered").count == 2, "the new session reports the band once")
        }
    }

    /// G4 (docs/real-bluez.md): bluetoothd hung when relinkd starts
    /// (SIGSTOPped: it keeps `org.bluez` and answers nothing, as bluetoothd
    /// stuck in the kernel did on a gateway). relinkd used to exit 10 s
    /// after each start ("timed out waiting for the first mirror"), and
    /// systemd restarted it for as long as bluetoothd stayed stuck. Now it
    /// starts without bluetoothd, tells programs `bluetoothdMissing`, and
    /// restores the link once bluetoothd answers again.
    @Test func relinkdStartsWhileBluetoothdIsHungAndRestoresTheLinkOnceItAnswers() async throws {
        try await Harness.with { h in
            try await h.connectAndSubscribeLock()
            try await h.push([70])
            try await h.waitUntilHandled()
            guard case .object(let daemon)? = try await h.bench.status()["bluetoothd"],
                  case .number(let number)? = daemon["pid"], let pid = pid_t(exactly: number) else {
                Issue.record("the bench did not say bluetoothd's pid")
                return
            }
            #expect(h.stopRelinkd() == 0)
            #expect(kill(pid, SIGSTOP) == 0)
            var hung = true
            defer { if hung { kill(pid, SIGCONT) } }
            try await h.startRelinkd()  // up only if it started without bluetoothd's objects
            try await h.waitUntilReady()
            let status = try await h.control.status()
            #expect(status["adapterState"] as? String == "bluetoothdMissing", "\(status)")
            #expect(kill(pid, SIGCONT) == 0)
            hung = false
            try await h.waitUntilNotificationsFlow(timeout: .seconds(60))
            try await h.push([71])
            try await h.waitUntilHandled()
            #expect(try await h.testValues() == [70, 71])
            #expect(try await h.control.status()["adapterState"] as? String == "poweredOn")
        }
    }
}
