import Testing
@testable import Restoration
import RelinkModel

@Suite("Disconnects, adapter, bluetoothd, restarts, sharing")
struct ConnectionEnvironmentTests {
    let lock = Fixtures.lockAddress
    let peripheral = Fixtures.lockPeripheral

    func connected(_ options: ConnectionOptions = Fixtures.options()) -> Driver {
        var driver = Driver(options: options)
        driver.send { $0.start() }
        driver.send { $0.knownDeviceLookup(found: true) }
        driver.send { $0.connectSucceeded(Fixtures.lockAddress) }
        driver.send { $0.servicesResolved(Fixtures.lockAddress) }
        return driver
    }

    @Test func disconnectReportsAndReconnectsAtOnce() {
        var driver = connected()
        let reason = ConnectionFailure(.transient, errorName: "org.bluez.Reason.Timeout", message: "link supervision timeout")
        let down = driver.send { $0.disconnected(lock, reason: reason) }
        #expect(down.events == [.disconnected(peripheral: peripheral, reason: reason)])
        #expect(down.requests == [.lookUpKnownDevice(lock)], "no backoff before the first reconnect round")
        #expect(down.records.last?.phase == .pending)
        driver.send { $0.knownDeviceLookup(found: true) }
        driver.send { $0.connectSucceeded(lock) }
        let up = driver.send { $0.servicesResolved(lock) }
        #expect(up.requests == [.armSubscriptions(lock)], "subscriptions are re-armed after every reconnection")
    }

    @Test func disconnectWithoutReconnectGoesIdle() {
        var driver = connected(Fixtures.options(reconnect: false))
        let down = driver.send { $0.disconnected(lock) }
        #expect(driver.state == .idle)
        #expect(down.requests.isEmpty)
        #expect(down.records.last?.phase == .idle)
    }

    @Test func disconnectOfAnotherAddressIsIgnored() {
        var driver = connected()
        let actions = driver.send { $0.disconnected(Fixtures.otherAddress) }
        #expect(actions.events.isEmpty)
        #expect(driver.state == .connected(lock, .knownIdentifier))
    }

    @Test func adapterPowerCycleWhileConnected() {
        var driver = connected()
        let off = driver.send { $0.adapterPowered(false) }
        #expect(off.events == [.disconnected(peripheral: peripheral, reason: .adapterOff)])
        #expect(driver.state == .waitingForAdapter)
        #expect(driver.advance(by: .seconds(7 * 86_400)).isEmpty, "no polling for a week")
        let on = driver.send { $0.adapterPowered(true) }
        #expect(on.requests == [.lookUpKnownDevice(lock)])
    }

    @Test func adapterOffDuringScanStopsTheScan() {
        var driver = Driver()
        driver.send { $0.start() }
        driver.send { $0.knownDeviceLookup(found: false) }
        driver.send { $0.connectedLookup([]) }
        let off = driver.send { $0.adapterPowered(false) }
        #expect(off.requests == [.stopScan])
        #expect(driver.timers.isEmpty)
    }

    @Test func bluetoothdRestartWhileConnectedResyncsAndAdoptsTheLink() {
        var driver = connected()
        let reset = driver.send { $0.bluetoothdRestarted() }
        #expect(reset.events == [.disconnected(peripheral: peripheral, reason: .bluetoothdRestarted)])
        #expect(reset.requests == [.lookUpKnownDevice(lock)])
        #expect(reset.contains(decision: "resync"))
        driver.send { $0.knownDeviceLookup(found: true) }
        driver.send { $0.servicesResolved(lock) }
        #expect(driver.state == .connected(lock, .knownIdentifier))
    }

    @Test func bluetoothdRestartWhileBackingOffRearmsBackgroundAutoConnect() {
        var driver = Driver()
        driver.world = { action in
            switch action {
            case .lookUpKnownDevice: { $0.knownDeviceLookup(found: true) }
            case .connect: { $0.connectFailed(ConnectionFailure(.transient, errorName: "x")) }
            case .lookUpConnected: { $0.connectedLookup([]) }
            default: nil
            }
        }
        driver.send { $0.start() }
        driver.advance(by: .seconds(15))
        #expect(driver.machine.backgroundAutoConnectAddress == lock)
        let reset = driver.send { $0.bluetoothdRestarted() }
        #expect(reset.requests.first == .lookUpKnownDevice(lock), "a new round starts at once")
        #expect(reset.contains(.useBackgroundAutoConnect(lock)), "the old registration died with bluetoothd: asked again when the device is found")
        let later = driver.advance(by: .seconds(15)) + driver.finishBackoffAndRound()
        #expect(!later.contains(.useBackgroundAutoConnect(lock)), "asked once per loss, not every round")
    }

    @Test func adapterPowerCycleRenewsBackgroundAutoConnectAndCancelStopsIt() {
        var driver = Driver()
        driver.world = { action in
            switch action {
            case .lookUpKnownDevice: { $0.knownDeviceLookup(found: true) }
            case .connect: { $0.connectFailed(ConnectionFailure(.transient, errorName: "x")) }
            case .lookUpConnected: { $0.connectedLookup([]) }
            default: nil
            }
        }
        driver.send { $0.start() }
        driver.advance(by: .seconds(15))
        driver.send { $0.adapterPowered(false) }
        #expect(driver.state == .waitingForAdapter)
        let back = driver.send { $0.adapterPowered(true) }
        #expect(back.contains(.useBackgroundAutoConnect(lock)), "renewed at the new round's lookup")
        let cancel = driver.send { $0.cancel() }
        #expect(cancel.contains(.stopBackgroundAutoConnect(lock)))
    }

    @Test func bluetoothdRestartWhileWaitingForAdapterKeepsWaiting() {
        var driver = Driver()
        driver.send { $0.start() }
        driver.send { $0.adapterPowered(false) }
        #expect(driver.send { $0.bluetoothdRestarted() }.requests.isEmpty)
        #expect(driver.state == .waitingForAdapter)
    }

    @Test func restoredConnectedLinkIsReportedAsRestored() {
        var driver = Driver()
        let start = driver.send { $0.start(restoringConnected: true) }
        #expect(start.requests == [.lookUpKnownDevice(lock)])
        driver.send { $0.knownDeviceLookup(found: true) }
        let connectActions = driver.performed.connects
        #expect(connectActions == [lock], "Connect on a connected device just succeeds: the link is adopted")
        driver.send { $0.connectSucceeded(lock) }
        let up = driver.send { $0.servicesResolved(lock) }
        #expect(up.events == [.restored(peripheral: peripheral, address: lock, route: .knownIdentifier)])
        #expect(up.requests == [.armSubscriptions(lock)])
        #expect(driver.performed.disconnects.isEmpty, "a restored link is never torn down")
    }

    @Test func restoredLinkThatIsGoneIsReportedDisconnectedOnce() {
        var driver = Driver()
        driver.world = { action in
            switch action {
            case .lookUpKnownDevice: { $0.knownDeviceLookup(found: false) }
            case .lookUpConnected: { $0.connectedLookup([]) }
            default: nil
            }
        }
        driver.send { $0.start(restoringConnected: true) }
        driver.advance(by: .seconds(3600))
        let disconnects = driver.performed.events.filter { if case .disconnected = $0 { true } else { false } }
        #expect(disconnects.count == 1)
        driver.send { $0.advertisement(Advertisement(address: lock)) }
        driver.send { $0.connectSucceeded(lock) }
        let up = driver.send { $0.servicesResolved(lock) }
        #expect(up.events == [.connected(peripheral: peripheral, address: lock, route: .scan)])
    }

    @Test func restoredLinkWithTheAdapterOffIsReportedDisconnected() {
        var driver = Driver()
        driver.send { $0.start(restoringConnected: true) }
        let off = driver.send { $0.adapterPowered(false) }
        #expect(off.events == [.disconnected(peripheral: peripheral, reason: .adapterOff)])
        driver.send { $0.adapterPowered(true) }
        driver.send { $0.knownDeviceLookup(found: true) }
        let up = driver.send { $0.servicesResolved(lock) }
        #expect(up.events == [.connected(peripheral: peripheral, address: lock, route: .knownIdentifier)], "after telling it went down, a new link is a plain connect")
    }

    @Test func secondIntentSharesTheLinkInsteadOfConnecting() {
        let owner = ConnectionIntentID(identifier: Fixtures.bandIdentifier, peripheral: peripheral)
        var driver = Driver()
        let claimed = driver.send { $0.claimedByOtherIntent(owner: owner) }
        #expect(claimed.requests.isEmpty)
        #expect(driver.state == .sharing(owner: owner, link: nil))
        #expect(driver.send { $0.start() }.requests.isEmpty, "a sharer issues no lookups nor Connect")
        let up = driver.send { $0.servicesResolved(lock) }
        #expect(up.events == [.connected(peripheral: peripheral, address: lock, route: .sharedLink)])
        #expect(up.requests == [.armSubscriptions(lock)])
        let down = driver.send { $0.disconnected(lock) }
        #expect(down.events == [.disconnected(peripheral: peripheral, reason: nil)])
        #expect(down.requests.isEmpty, "the owner reconnects, not the sharer")
        let granted = driver.send { $0.ownershipGranted() }
        #expect(granted.requests == [.lookUpKnownDevice(lock)], "once owner, it runs the strategies")
    }

    /// Issue 21, item 8: a sharer claimed while the owner's link is up
    /// hears `connected` at once (no BlueZ signal will come) and is stored
    /// connected, so that a restart restores it.
    @Test func aSharerClaimedOnAnUpLinkReportsItAtOnce() {
        let owner = ConnectionIntentID(identifier: Fixtures.bandIdentifier, peripheral: peripheral)
        var driver = Driver()
        let claimed = driver.send { $0.claimedByOtherIntent(owner: owner, ownerLink: lock) }
        #expect(claimed.events == [.connected(peripheral: peripheral, address: lock, route: .sharedLink)])
        #expect(claimed.requests == [.armSubscriptions(lock)])
        #expect(claimed.records.last?.phase == .connected)
        #expect(driver.state == .sharing(owner: owner, link: lock))
        #expect(driver.machine.reportedLink == lock)
        #expect(driver.send { $0.servicesResolved(lock) }.events.isEmpty, "BlueZ's own signal later changes nothing")
        let down = driver.send { $0.disconnected(lock) }
        #expect(down.records.last?.phase == .pending)
    }

    /// The owner tells its sharers when its link is up (an adopted link
    /// changes no BlueZ property), and when a link restored as connected
    /// turned out gone.
    @Test func theOwnerTellsItsSharersAboutItsLink() {
        #expect(connected().performed.contains(.tellSharers(link: lock, failure: nil)))
        var restoring = Driver(options: Fixtures.options(strategies: [.knownIdentifier]))
        restoring.send { $0.start(restoringConnected: true) }
        let lost = restoring.send { $0.knownDeviceLookup(found: false) }
        #expect(lost.contains { if case .tellSharers(nil, _?) = $0 { true } else { false } }, "\(lost)")
    }

    @Test func aSharerRestoredAsConnectedFollowsTheOwner() {
        let owner = ConnectionIntentID(identifier: Fixtures.bandIdentifier, peripheral: peripheral)
        var kept = Driver()
        kept.send { $0.claimedByOtherIntent(owner: owner, restoringConnected: true) }
        let up = kept.send { $0.ownerLink(lock, failure: nil) }
        #expect(up.events == [.restored(peripheral: peripheral, address: lock, route: .sharedLink)])
        #expect(kept.send { $0.ownerLink(lock, failure: nil) }.events.isEmpty, "told twice, reported once")
        var gone = Driver()
        gone.send { $0.claimedByOtherIntent(owner: owner, restoringConnected: true) }
        let lost = gone.send { $0.ownerLink(nil, failure: .bluetoothdRestarted) }
        #expect(lost.events == [.disconnected(peripheral: peripheral, reason: .bluetoothdRestarted)])
        #expect(gone.send { $0.ownerLink(nil, failure: .bluetoothdRestarted) }.events.isEmpty, "said once")
        let back = gone.send { $0.servicesResolved(lock) }
        #expect(back.events == [.connected(peripheral: peripheral, address: lock, route: .sharedLink)], "after telling it went down, a plain connect")
    }

    @Test func sharerTakesOverAnUpLinkWithoutReconnecting() {
        let owner = ConnectionIntentID(identifier: Fixtures.bandIdentifier, peripheral: peripheral)
        var driver = Driver()
        driver.send { $0.claimedByOtherIntent(owner: owner) }
        driver.send { $0.servicesResolved(lock) }
        let granted = driver.send { $0.ownershipGranted() }
        #expect(granted.requests.isEmpty)
        #expect(driver.state == .connected(lock, .sharedLink))
        #expect(driver.send { $0.cancel() }.disconnects == [lock], "as sole owner it now ends the link")
    }

    @Test func backgroundConnectOfAnotherDeviceIsIgnored() {
        var driver = Driver()
        driver.send { $0.start() }
        let actions = driver.send { $0.deviceConnected(Fixtures.otherAddress) }
        #expect(actions.requests.isEmpty)
        #expect(driver.state == .trying(.knownIdentifier))
    }
}
