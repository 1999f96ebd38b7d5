import Testing
@testable import Restoration
import RelinkModel

@Suite("Connection strategies")
struct ConnectionStrategyTests {
    let lock = Fixtures.lockAddress
    let other = Fixtures.otherAddress

    @Test func defaultOrderIsKnownThenConnectedThenScan() {
        var driver = Driver()
        let first = driver.send { $0.start() }
        #expect(first.requests == [.lookUpKnownDevice(lock)])
        #expect(driver.state == .trying(.knownIdentifier))
        #expect(first.records.map(\.phase) == [.pending])

        let second = driver.send { $0.knownDeviceLookup(found: false) }
        #expect(second.requests == [.lookUpConnected(services: [Fixtures.lockService])])
        #expect(driver.state == .trying(.alreadyConnected))

        let third = driver.send { $0.connectedLookup([]) }
        #expect(third.requests == [.startScan(ScanIntent(services: [Fixtures.lockService]))])
        #expect(driver.state == .trying(.scan))
        #expect(driver.machine.attempt == 1)
    }

    @Test func knownIdentifierConnectsAndArmsSubscriptions() {
        var driver = Driver()
        driver.send { $0.start() }
        let connecting = driver.send { $0.knownDeviceLookup(found: true) }
        // Pending until cancelled (the default): the device is also held by
        // background auto-connect from the moment BlueZ is known to have it.
        #expect(connecting.requests == [.useBackgroundAutoConnect(lock), .connect(lock)])
        #expect(driver.state == .connecting(lock, .knownIdentifier))
        driver.send { $0.connectSucceeded(lock) }
        #expect(driver.state == .waitingForServices(lock, .knownIdentifier))
        let up = driver.send { $0.servicesResolved(lock) }
        #expect(driver.state == .connected(lock, .knownIdentifier))
        #expect(up.requests == [.armSubscriptions(lock)])
        #expect(up.events == [.connected(peripheral: Fixtures.lockPeripheral, address: lock, route: .knownIdentifier)])
        #expect(up.records.map(\.phase) == [.connected])
        #expect(driver.timers.isEmpty, "no step or deadline timer may outlive the connection")
    }

    @Test func orderIsConfigurable() {
        var driver = Driver(options: Fixtures.options(strategies: [.scan, .knownIdentifier]))
        let first = driver.send { $0.start() }
        #expect(first.scans.count == 1)
        #expect(driver.state == .trying(.scan))
        driver.advance(by: .seconds(15))
        #expect(driver.state == .trying(.knownIdentifier))
        #expect(driver.performed.contains(.stopScan))
    }

    @Test func strategiesNotListedAreNeverTried() {
        var driver = Driver(options: Fixtures.options(strategies: [.alreadyConnected]))
        driver.send { $0.start() }
        driver.send { $0.connectedLookup([]) }
        #expect(!driver.performed.contains(.lookUpKnownDevice(lock)))
        #expect(driver.performed.scans.isEmpty)
        guard case .backingOff = driver.state else {
            Issue.record("expected backing off, got \(driver.state)")
            return
        }
    }

    @Test func knownIdentifierIsSkippedWithoutStoredAddress() {
        var driver = Driver(knownAddress: nil)
        let first = driver.send { $0.start() }
        #expect(first.contains(decision: "strategy-skipped"))
        #expect(first.requests == [.lookUpConnected(services: [Fixtures.lockService])])
    }

    @Test func alreadyConnectedAdoptsTheStoredAddressAmongSeveral() {
        var driver = Driver()
        driver.send { $0.start() }
        driver.send { $0.knownDeviceLookup(found: false) }
        let candidates = [ConnectedCandidate(address: other, services: [Fixtures.lockService]), ConnectedCandidate(address: lock, services: [Fixtures.lockService])]
        let actions = driver.send { $0.connectedLookup(candidates) }
        #expect(actions.connects == [lock])
        #expect(driver.state == .connecting(lock, .alreadyConnected))
    }

    @Test func severalUnknownCandidatesAreNotGuessedByDefault() {
        var driver = Driver(knownAddress: nil)
        driver.send { $0.start() }
        let candidates = [ConnectedCandidate(address: other, services: [Fixtures.lockService]), ConnectedCandidate(address: lock, services: [Fixtures.lockService])]
        let actions = driver.send { $0.connectedLookup(candidates) }
        #expect(actions.connects.isEmpty)
        #expect(actions.decisions.contains { $0.kind == .ambiguousCandidates(count: 2) })
        #expect(driver.state == .trying(.scan))
    }

    @Test func lowestAddressChoiceAdoptsOneOfSeveral() {
        var driver = Driver(options: Fixtures.options(candidateChoice: .lowestAddress), knownAddress: nil)
        driver.send { $0.start() }
        let candidates = [ConnectedCandidate(address: other, services: [Fixtures.lockService]), ConnectedCandidate(address: lock, services: [Fixtures.lockService])]
        let actions = driver.send { $0.connectedLookup(candidates) }
        #expect(actions.connects == [lock], "C0:..:55 sorts before C0:..:66")
    }

    @Test func oneMatchingCandidateIsAdoptedAndItsLinkKeptOnCancel() {
        var driver = Driver(knownAddress: nil)
        driver.send { $0.start() }
        let candidates = [ConnectedCandidate(address: other, services: [Fixtures.heartRate]), ConnectedCandidate(address: lock, services: [Fixtures.lockService])]
        #expect(driver.send { $0.connectedLookup(candidates) }.connects == [lock])
        driver.send { $0.connectSucceeded(lock) }
        let up = driver.send { $0.servicesResolved(lock) }
        #expect(up.events == [.connected(peripheral: Fixtures.lockPeripheral, address: lock, route: .alreadyConnected)])
        let cancel = driver.send { $0.cancel() }
        #expect(cancel.disconnects.isEmpty, "a link another client made is not torn down")
    }

    @Test func scanMatchesByAddressAndConnects() {
        var driver = Driver(options: Fixtures.options(strategies: [.scan]))
        driver.send { $0.start() }
        #expect(driver.send { $0.advertisement(Advertisement(address: other, serviceUUIDs: [Fixtures.lockService])) }.isEmpty)
        let matched = driver.send { $0.advertisement(Advertisement(address: lock)) }
        #expect(matched.requests == [.stopScan, .connect(lock)])
        #expect(driver.state == .connecting(lock, .scan))
    }

    @Test func scanFindsARotatedAddressByMatchRuleAndPersistsIt() {
        let old = Fixtures.address("4A:00:00:00:00:01", .random)
        let new = Fixtures.address("4B:00:00:00:00:02", .random)
        #expect(old.isRotating && new.isRotating)
        var driver = Driver(options: Fixtures.options(match: MatchRule(localName: "FrontDoor")), knownAddress: old)
        driver.send { $0.start() }
        driver.send { $0.knownDeviceLookup(found: false) }
        driver.send { $0.connectedLookup([]) }
        #expect(driver.send { $0.advertisement(Advertisement(address: new, localName: "BackDoor")) }.isEmpty)
        let matched = driver.send { $0.advertisement(Advertisement(address: new, localName: "FrontDoor")) }
        #expect(matched.connects == [new])
        #expect(matched.records.last?.address == new)
        #expect(driver.machine.knownAddress == new)
    }
}
