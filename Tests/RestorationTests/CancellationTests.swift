import Testing
@testable import Restoration
import RelinkModel

@Suite("Cancellation in every state")
struct CancellationTests {
    static let lock = Fixtures.lockAddress

    /// A way to bring a fresh machine into one state.
    struct Scenario: CustomTestStringConvertible, Sendable {
        var name: String
        var linkUp: Bool
        var ownLinkPending: Bool
        var reach: @Sendable (inout Driver) -> Void
        var testDescription: String { name }
    }

    static let scenarios: [Scenario] = [
        Scenario(name: "idle", linkUp: false, ownLinkPending: false) { _ in },
        Scenario(name: "trying known identifier", linkUp: false, ownLinkPending: false) { $0.send { $0.start() } },
        Scenario(name: "trying already connected", linkUp: false, ownLinkPending: false) { driver in
            driver.send { $0.start() }
            driver.send { $0.knownDeviceLookup(found: false) }
        },
        Scenario(name: "trying scan", linkUp: false, ownLinkPending: false) { driver in
            driver.send { $0.start() }
            driver.send { $0.knownDeviceLookup(found: false) }
            driver.send { $0.connectedLookup([]) }
        },
        Scenario(name: "connecting", linkUp: false, ownLinkPending: true) { driver in
            driver.send { $0.start() }
            driver.send { $0.knownDeviceLookup(found: true) }
        },
        Scenario(name: "waiting for services", linkUp: false, ownLinkPending: true) { driver in
            driver.send { $0.start() }
            driver.send { $0.knownDeviceLookup(found: true) }
            driver.send { $0.connectSucceeded(lock) }
        },
        Scenario(name: "connected", linkUp: true, ownLinkPending: true) { driver in
            driver.send { $0.start() }
            driver.send { $0.knownDeviceLookup(found: true) }
            driver.send { $0.connectSucceeded(lock) }
            driver.send { $0.servicesResolved(lock) }
        },
        Scenario(name: "backing off with auto-connect", linkUp: false, ownLinkPending: false) { driver in
            driver.send { $0.start() }
            driver.send { $0.knownDeviceLookup(found: true) }
            driver.send { $0.connectFailed(ConnectionFailure(.transient, errorName: "x")) }
            driver.send { $0.connectedLookup([]) }
            driver.advance(by: .seconds(15))
        },
        Scenario(name: "backing off with low-duty scan", linkUp: false, ownLinkPending: false) { driver in
            driver.send { $0.start() }
            driver.send { $0.knownDeviceLookup(found: false) }
            driver.send { $0.connectedLookup([]) }
            driver.advance(by: .seconds(15))
        },
        Scenario(name: "waiting for adapter", linkUp: false, ownLinkPending: false) { driver in
            driver.send { $0.start() }
            driver.send { $0.adapterPowered(false) }
        },
        Scenario(name: "sharing, link down", linkUp: false, ownLinkPending: false) { driver in
            driver.send { $0.claimedByOtherIntent(owner: ConnectionIntentID(identifier: Fixtures.bandIdentifier, peripheral: Fixtures.lockPeripheral)) }
        },
        Scenario(name: "sharing, link up", linkUp: true, ownLinkPending: false) { driver in
            driver.send { $0.claimedByOtherIntent(owner: ConnectionIntentID(identifier: Fixtures.bandIdentifier, peripheral: Fixtures.lockPeripheral)) }
            driver.send { $0.servicesResolved(lock) }
        },
    ]

    @Test(arguments: scenarios)
    func cancelStopsEverything(_ scenario: Scenario) {
        var driver = Driver(options: Fixtures.options(deadline: .after(.seconds(3600))))
        scenario.reach(&driver)
        let before = driver.state
        let actions = driver.send { $0.cancel() }
        #expect(driver.state == .cancelled, "from \(before)")
        #expect(driver.timers.isEmpty, "every timer is cancelled")
        #expect(!driver.machine.isScanning)
        #expect(driver.machine.backgroundAutoConnectAddress == nil)
        #expect(actions.disconnects == (scenario.ownLinkPending ? [Self.lock] : []))
        let disconnectEvents = actions.events.filter { if case .disconnected = $0 { true } else { false } }
        #expect(disconnectEvents == (scenario.linkUp ? [.disconnected(peripheral: Fixtures.lockPeripheral, reason: nil)] : []))
        #expect(actions.records.last?.phase == .cancelled)
        if driver.performed.contains(where: { if case .startScan = $0 { true } else { false } }) {
            #expect(driver.performed.last(where: { if case .startScan = $0 { true } else { $0 == .stopScan } }) == .stopScan)
        }

        // Nothing brings a cancelled intent back.
        #expect(driver.send { $0.cancel() }.isEmpty, "cancel is idempotent")
        #expect(driver.advance(by: .seconds(86_400)).isEmpty)
        #expect(driver.send { $0.advertisement(Advertisement(address: Self.lock)) }.isEmpty)
        #expect(driver.send { $0.adapterPowered(true) }.isEmpty)
        #expect(driver.send { $0.bluetoothdRestarted() }.isEmpty)
        #expect(driver.send { $0.start() }.requests.isEmpty)
        #expect(driver.state == .cancelled)
    }

    @Test func cancelKeepsALinkOthersShare() {
        var driver = Driver()
        Self.scenarios[6].reach(&driver)
        let actions = driver.send { $0.cancel(linkSharedWithOthers: true) }
        #expect(actions.disconnects.isEmpty)
        #expect(actions.events == [.disconnected(peripheral: Fixtures.lockPeripheral, reason: nil)])
    }
}
