import Testing
@testable import Restoration
import RelinkModel

@Suite("Failure classes")
struct FailureClassTests {
    let lock = Fixtures.lockAddress

    /// Starts, finds the known device, and fails its connect with `failure`.
    func failKnownConnect(_ failure: ConnectionFailure) -> (Driver, [Action]) {
        var driver = Driver()
        driver.send { $0.start() }
        driver.send { $0.knownDeviceLookup(found: true) }
        let actions = driver.send { $0.connectFailed(failure) }
        return (driver, actions)
    }

    @Test(arguments: FailureClass.allCases)
    func everyClassIsHandledAsDocumented(_ failureClass: FailureClass) {
        let failure = ConnectionFailure(failureClass, errorName: "org.bluez.Error.Test", message: "original message")
        let (driver, actions) = failKnownConnect(failure)
        #expect(actions.decisions.first?.failure == failure, "the original error is journalled")
        switch failureClass {
        case .transient, .inProgress, .timeout, .cancelled, .unknown:
            #expect(driver.state == .trying(.alreadyConnected))
            #expect(actions.events.isEmpty)
        case .deviceGone:
            #expect(driver.state == .trying(.scan), "a vanished device is searched for by scanning")
            #expect(!actions.requests.contains(.lookUpConnected(services: [Fixtures.lockService])))
        case .notReady:
            #expect(driver.state == .waitingForAdapter)
            #expect(driver.timer(.step) == nil && driver.timer(.backoff) == nil, "no polling while the adapter is off")
        case .notSupported, .notPermitted:
            #expect(driver.state == .failed(failure))
            #expect(actions.events == [.failedToConnect(peripheral: Fixtures.lockPeripheral, reason: failure)])
            #expect(actions.records.last?.phase == .failed(failure))
            #expect(driver.timers.isEmpty)
        }
    }

    @Test func notReadyWaitsForAdapterUpWithoutPolling() {
        var (driver, _) = failKnownConnect(ConnectionFailure(.notReady, errorName: "org.bluez.Error.NotReady"))
        #expect(driver.advance(by: .seconds(86_400)).isEmpty, "a day passes with no action")
        let back = driver.send { $0.adapterPowered(true) }
        #expect(back.requests == [.lookUpKnownDevice(lock)])
        #expect(driver.machine.attempt == 2)
    }

    @Test func deviceGoneStopsBackgroundAutoConnectAndFallsBackToLowDutyScan() {
        var driver = Driver(options: Fixtures.options(strategies: [.knownIdentifier, .scan]))
        driver.send { $0.start() }
        driver.send { $0.knownDeviceLookup(found: true) }
        driver.send { $0.connectFailed(ConnectionFailure(.transient, errorName: "x")) }
        driver.advance(by: .seconds(15))
        guard case .backingOff(_, .autoConnect(lock)) = driver.state else {
            Issue.record("expected background auto-connect, got \(driver.state)")
            return
        }
        driver.finishBackoff()
        driver.send { $0.knownDeviceLookup(found: true) }
        let gone = driver.send { $0.connectFailed(ConnectionFailure(.deviceGone, errorName: "org.freedesktop.DBus.Error.UnknownObject")) }
        #expect(gone.requests.first == .stopBackgroundAutoConnect(lock))
        #expect(driver.state == .trying(.scan))
        driver.advance(by: .seconds(15))
        guard case .backingOff(_, .lowDutyScan) = driver.state else {
            Issue.record("expected a low-duty scan, got \(driver.state)")
            return
        }
        #expect(driver.performed.scans.last?.lowDuty == true)
    }

    @Test func failedIntentIgnoresLaterInputs() {
        var (driver, _) = failKnownConnect(ConnectionFailure(.notPermitted, errorName: "org.bluez.Error.NotPermitted"))
        #expect(driver.send { $0.knownDeviceLookup(found: true) }.requests.isEmpty)
        #expect(driver.send { $0.advertisement(Advertisement(address: lock)) }.isEmpty)
        #expect(driver.send { $0.adapterPowered(true) }.isEmpty)
        #expect(driver.send { $0.bluetoothdRestarted() }.isEmpty)
        #expect(driver.state == .failed(ConnectionFailure(.notPermitted, errorName: "org.bluez.Error.NotPermitted")))
    }
}
