import Testing
@testable import Restoration
import RelinkModel

@Suite("Pending until cancelled")
struct PendingUntilCancelledTests {
    let lock = Fixtures.lockAddress
    static let day: Duration = .seconds(86_400)

    /// A lock out of range: BlueZ knows it, every connect aborts.
    func outOfRangeLock(random: any RandomSource) -> Driver {
        var driver = Driver(random: random)
        driver.recording = false
        driver.world = { action in
            switch action {
            case .lookUpKnownDevice: { $0.knownDeviceLookup(found: true) }
            case .connect: { $0.connectFailed(ConnectionFailure(.transient, errorName: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")) }
            case .lookUpConnected: { $0.connectedLookup([]) }
            default: nil
            }
        }
        return driver
    }

    @Test func staysPendingForThirtyDaysAtTheMaximumInterval() {
        var driver = outOfRangeLock(random: SplitMixRandom(seed: 7))
        driver.recording = true
        driver.send { $0.start() }
        driver.advance(by: .seconds(15)) // the first round's scan step
        driver.recording = false
        var autoConnectRequests = 0
        var failedEvents = 0
        var lastIntervals: [Duration] = []
        var rounds = 0
        while driver.clock.now.offset < Self.day * 30 {
            guard case .backingOff(let until, let background) = driver.state else {
                Issue.record("expected backing off between rounds, got \(driver.state)")
                return
            }
            #expect(background == .autoConnect(lock))
            let interval = driver.clock.now.duration(to: until)
            lastIntervals = Array((lastIntervals + [interval]).suffix(20))
            let actions = driver.advance(by: interval) + driver.advance(by: .seconds(15))
            autoConnectRequests += actions.filter { $0 == .useBackgroundAutoConnect(lock) }.count
            failedEvents += actions.events.count
            rounds += 1
        }
        autoConnectRequests += driver.performed.filter { $0 == .useBackgroundAutoConnect(lock) }.count
        #expect(rounds > 8_000, "about one round per 5 minutes for 30 days")
        #expect(failedEvents == 0, "a pending intent never gives up nor floods the outbox")
        #expect(autoConnectRequests == 1, "background auto-connect is asked for once")
        #expect(driver.machine.consecutiveFailedRounds == BackoffPolicy.defaultTransient.count, "the round counter saturates")
        #expect(driver.maxOutstandingTimers <= 1, "no deadline; one step or backoff timer at a time")
        #expect(lastIntervals.allSatisfy { $0 >= .seconds(240) && $0 <= .seconds(360) }, "still retrying at 300 s ± 20 %")
        #expect(driver.machine.attempt == rounds + 1)

        // The lock comes home: the kernel's background auto-connect connects it.
        driver.recording = true
        let home = driver.send { $0.deviceConnected(lock) }
        #expect(driver.state == .waitingForServices(lock, .backgroundAutoConnect))
        #expect(home.requests.isEmpty)
        let up = driver.send { $0.servicesResolved(lock) }
        #expect(up.events == [.connected(peripheral: Fixtures.lockPeripheral, address: lock, route: .backgroundAutoConnect)])
        #expect(up.requests == [.armSubscriptions(lock)])
        #expect(driver.timers.isEmpty)
    }

    /// The lock comes back in the first round after a drop, while the
    /// round is past its Connect (which timed out) and scanning: background
    /// auto-connect, on since the device was found, connects it at its first
    /// advertisement; the scan step would need one to find it and another
    /// to connect.
    @Test func autoConnectHoldsTheDeviceFromItsFirstLookup() {
        var driver = outOfRangeLock(random: FixedRandom(value: 0.5))
        driver.recording = true
        let start = driver.send { $0.start() }
        #expect(start.contains(.useBackgroundAutoConnect(lock)), "asked for when the device is found, before any backoff")
        #expect(driver.state == .trying(.scan), "the Connect failed; the round scans")
        let home = driver.send { $0.deviceConnected(lock) }
        #expect(home.requests == [.stopScan])
        #expect(driver.state == .waitingForServices(lock, .backgroundAutoConnect))
        let up = driver.send { $0.servicesResolved(lock) }
        #expect(up.events == [.connected(peripheral: Fixtures.lockPeripheral, address: lock, route: .backgroundAutoConnect)])
        #expect(driver.performed.filter { $0 == .useBackgroundAutoConnect(lock) }.count == 1)
    }

    /// With a deadline the intent is not held in the background: no auto-connect.
    @Test func anIntentWithADeadlineDoesNotAskForAutoConnect() {
        var driver = Driver(options: Fixtures.options(deadline: .after(.seconds(60))))
        driver.send { $0.start() }
        let found = driver.send { $0.knownDeviceLookup(found: true) }
        #expect(found.requests == [.connect(lock)])
    }

    @Test func evictedDeviceIsHeldByALowDutyScanAndFoundByIt() {
        var driver = Driver()
        driver.world = { action in
            switch action {
            case .lookUpKnownDevice: { $0.knownDeviceLookup(found: false) }
            case .lookUpConnected: { $0.connectedLookup([]) }
            default: nil
            }
        }
        driver.send { $0.start() }
        for _ in 0 ..< 3 * 288 { // three days of rounds
            driver.advance(by: .seconds(300))
        }
        guard case .backingOff(_, .lowDutyScan) = driver.state else {
            Issue.record("expected a low-duty scan between rounds, got \(driver.state)")
            return
        }
        #expect(driver.performed.events.isEmpty)
        #expect(!driver.performed.contains { if case .useBackgroundAutoConnect = $0 { true } else { false } })
        let found = driver.send { $0.advertisement(Advertisement(address: lock)) }
        #expect(found.requests == [.stopScan, .connect(lock)])
        #expect(driver.state == .connecting(lock, .scan))
    }
}
