import Testing
@testable import Restoration
import RelinkModel

@Suite("The input enum and decisions")
struct ClassificationAndInputTests {
    @Test func handleDispatchesLikeTheMethods() {
        let inputs: [Machine.Input] = [
            .start(restoringConnected: false), .knownDeviceLookup(found: false), .connectedLookup([]),
            .advertisement(Advertisement(address: Fixtures.lockAddress)), .connectSucceeded(Fixtures.lockAddress),
            .servicesResolved(Fixtures.lockAddress), .disconnected(Fixtures.lockAddress, reason: nil),
            .adapterPowered(false), .adapterPowered(true), .bluetoothdRestarted, .cancel(linkSharedWithOthers: false),
        ]
        var viaEnum = Driver()
        var viaMethods = Driver()
        for input in inputs {
            let a = viaEnum.send { $0.handle(input) }
            let b = viaMethods.send { machine in
                switch input {
                case .start(let restoring): machine.start(restoringConnected: restoring)
                case .knownDeviceLookup(let found): machine.knownDeviceLookup(found: found)
                case .connectedLookup(let candidates): machine.connectedLookup(candidates)
                case .advertisement(let report): machine.advertisement(report)
                case .connectSucceeded(let address): machine.connectSucceeded(address)
                case .servicesResolved(let address): machine.servicesResolved(address)
                case .disconnected(let address, let reason, let cause): machine.disconnected(address, reason: reason, cause: cause)
                case .adapterPowered(let powered): machine.adapterPowered(powered)
                case .bluetoothdRestarted: machine.bluetoothdRestarted()
                case .cancel(let shared): machine.cancel(linkSharedWithOthers: shared)
                default: []
                }
            }
            #expect(a.requests == b.requests && a.events == b.events)
            #expect(viaEnum.state == viaMethods.state)
        }
        #expect(viaEnum.state == .cancelled)
        #expect(viaEnum.performed.events.contains(.connected(peripheral: Fixtures.lockPeripheral, address: Fixtures.lockAddress, route: .scan)))
    }

    @Test func realClocksFit() {
        var continuous = ConnectionStateMachine(intent: Fixtures.lockIntent, options: Fixtures.options(), knownAddress: Fixtures.lockAddress, clock: ContinuousClock())
        #expect(continuous.start().contains(.lookUpKnownDevice(Fixtures.lockAddress)))
        var suspending = ConnectionStateMachine(intent: Fixtures.lockIntent, options: Fixtures.options(), knownAddress: nil, clock: SuspendingClock())
        #expect(suspending.start().contains(.lookUpConnected(services: [Fixtures.lockService])))
    }

    @Test func decisionsCarryJournalFields() throws {
        var driver = Driver()
        driver.send { $0.start() }
        driver.send { $0.knownDeviceLookup(found: true) }
        let failure = ConnectionFailure(.transient, errorName: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
        let failed = driver.send { $0.connectFailed(failure) }
        let decision = try #require(failed.decisions.first)
        #expect(decision.journalFields == [
            "RELINK_RESTORE_ID": "org.example.lock",
            "RELINK_PERIPHERAL": Fixtures.lockPeripheral.description,
            "RELINK_DECISION": "connect-failed",
            "RELINK_ATTEMPT": "1",
            "RELINK_STRATEGY": "knownIdentifier",
            "RELINK_ERROR": "org.bluez.Error.Failed",
            "RELINK_ERROR_CLASS": "transient",
            "RELINK_ERROR_MESSAGE": "le-connection-abort-by-local",
        ])
        #expect(driver.performed.decisions.first?.kind == .started(restoring: false) && driver.performed.decisions.first?.attempt == 0)
        #expect(driver.performed.decisions.dropFirst().allSatisfy { $0.intent == Fixtures.lockIntent && $0.attempt == 1 })
    }
}
