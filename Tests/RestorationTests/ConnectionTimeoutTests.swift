import Testing
@testable import Restoration
import RelinkModel

@Suite("Connection timeouts and deadlines")
struct ConnectionTimeoutTests {
    let lock = Fixtures.lockAddress

    @Test func lookupStepTimesOutIntoTheNextStep() {
        var driver = Driver()
        driver.send { $0.start() }
        #expect(driver.advance(by: .seconds(4)).isEmpty, "nothing happens before the 5 s lookup timeout")
        let fired = driver.advance(by: .seconds(1))
        #expect(fired.contains(decision: "step-timed-out"))
        #expect(driver.state == .trying(.alreadyConnected))
    }

    @Test func connectTimeoutCancelsThePendingConnect() {
        var driver = Driver()
        driver.send { $0.start() }
        driver.send { $0.knownDeviceLookup(found: true) }
        #expect(driver.advance(by: .seconds(19)).isEmpty)
        let fired = driver.advance(by: .seconds(1))
        #expect(fired.disconnects == [lock], "a Disconnect cancels BlueZ's pending Connect")
        #expect(fired.decisions.first?.failure?.failureClass == .timeout)
        #expect(driver.state == .trying(.alreadyConnected))
    }

    @Test func servicesTimeoutDisconnectsAndMovesOn() {
        var driver = Driver()
        driver.send { $0.start() }
        driver.send { $0.knownDeviceLookup(found: true) }
        driver.send { $0.connectSucceeded(lock) }
        let fired = driver.advance(by: .seconds(15))
        #expect(fired.disconnects == [lock])
        #expect(driver.state == .trying(.alreadyConnected))
    }

    @Test func scanTimeoutStopsTheScanAndEndsTheRound() {
        var driver = Driver(options: Fixtures.options(strategies: [.scan], deadline: .after(.seconds(600))))
        driver.send { $0.start() }
        let fired = driver.advance(by: .seconds(15))
        #expect(fired.requests == [.stopScan])
        guard case .backingOff(let until, .none) = driver.state else {
            Issue.record("expected backing off without background, got \(driver.state)")
            return
        }
        #expect(driver.clock.now.duration(to: until) == .seconds(4), "scan found nothing: device-missing list starts at 4 s")
    }

    @Test func overallDeadlineFailsWithTimeoutAndLeavesNothingRunning() {
        var driver = Driver(options: Fixtures.options(deadline: .after(.seconds(60))))
        driver.world = { action in
            switch action {
            case .lookUpKnownDevice: { $0.knownDeviceLookup(found: true) }
            case .connect: { $0.connectFailed(ConnectionFailure(.transient, errorName: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")) }
            case .lookUpConnected: { $0.connectedLookup([]) }
            default: nil
            }
        }
        driver.send { $0.start() }
        #expect(driver.machine.deadline == driver.clock.now.advanced(by: .seconds(60)))
        driver.advance(by: .seconds(59))
        #expect(!driver.state.isTerminal)
        let fired = driver.advance(by: .seconds(1))
        #expect(driver.state == .failed(.deadlineExpired))
        #expect(fired.events == [.failedToConnect(peripheral: Fixtures.lockPeripheral, reason: .deadlineExpired)])
        #expect(fired.records.last?.phase == .failed(.deadlineExpired))
        #expect(driver.timers.isEmpty)
        #expect(!driver.machine.isScanning)
        #expect(driver.advance(by: .seconds(3600)).isEmpty, "a failed intent does nothing more")
    }

    @Test func deadlineIsDroppedOnceConnectedAndRestartsAfterADisconnect() {
        var driver = Driver(options: Fixtures.options(deadline: .after(.seconds(60))))
        driver.send { $0.start() }
        driver.send { $0.knownDeviceLookup(found: true) }
        driver.send { $0.servicesResolved(lock) }
        #expect(driver.machine.deadline == nil)
        driver.advance(by: .seconds(3600))
        #expect(driver.state == .connected(lock, .knownIdentifier))
        driver.send { $0.disconnected(lock) }
        #expect(driver.machine.deadline == driver.clock.now.advanced(by: .seconds(60)))
    }

    @Test func staleTimerTokensAreIgnored() throws {
        var driver = Driver()
        driver.send { $0.start() }
        let lookupTimer = try #require(driver.timer(.step))
        driver.send { $0.knownDeviceLookup(found: true) }
        #expect(driver.timers[lookupTimer] == nil, "the lookup timer was cancelled")
        let stale = driver.send { $0.timerFired(lookupTimer) }
        #expect(stale.decisions.map(\.kind) == [.staleTimer(lookupTimer)])
        #expect(stale.requests.isEmpty)
        #expect(driver.state == .connecting(lock, .knownIdentifier))

        let forged = TimerToken(id: 9999, purpose: .deadline)
        #expect(driver.send { $0.timerFired(forged) }.requests.isEmpty)
        #expect(driver.state == .connecting(lock, .knownIdentifier))
    }

    @Test func timerTokensAreNeverReused() {
        var driver = Driver(options: Fixtures.options(strategies: [.scan]))
        driver.send { $0.start() }
        for _ in 0 ..< 50 { driver.advance(by: .seconds(400)) }
        let ids = driver.performed.compactMap { if case .scheduleTimer(let token, _) = $0 { token.id } else { nil } }
        #expect(ids.count > 50)
        #expect(Set(ids).count == ids.count)
    }
}
