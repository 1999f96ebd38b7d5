import Testing
@testable import Restoration
import RelinkModel

@Suite("Start-up plan")
struct StartupPlanTests {
    let lock = Fixtures.lockPeripheral
    let band = PeripheralID()
    let gone = PeripheralID()
    let logger = Fixtures.identifier("org.example.logger")
    let hrm = CharacteristicKey(service: Fixtures.heartRate, characteristic: Fixtures.uuid("2A37"))

    func record(_ identifier: RestoreIdentifier, _ peripheral: PeripheralID, _ phase: ConnectionIntentRecord.Phase) -> ConnectionIntentRecord {
        ConnectionIntentRecord(intent: ConnectionIntentID(identifier: identifier, peripheral: peripheral), options: Fixtures.options(), address: Fixtures.lockAddress, phase: phase)
    }

    @Test func resumesScansPendingAndConnectedIntentsAndSubscriptions() throws {
        let lockApp = IdentifierState(
            identifier: Fixtures.lockIdentifier,
            connections: [record(Fixtures.lockIdentifier, lock, .pending), record(Fixtures.lockIdentifier, gone, .cancelled)])
        let bandApp = IdentifierState(
            identifier: Fixtures.bandIdentifier,
            scan: ScanIntent(services: [Fixtures.heartRate]),
            connections: [record(Fixtures.bandIdentifier, band, .connected), record(Fixtures.bandIdentifier, gone, .failed(.deadlineExpired))],
            subscriptions: [Subscription(identifier: Fixtures.bandIdentifier, peripheral: band, characteristic: hrm)])
        try lockApp.validate()
        try bandApp.validate()
        var registry = OwnershipRegistry()
        let plan = StartupPlan(states: [lockApp, bandApp], registry: &registry)
        #expect(plan.scans == [.identifier(Fixtures.bandIdentifier): ScanIntent(services: [Fixtures.heartRate])])
        #expect(plan.resume.map(\.record.intent.peripheral) == [band, lock], "the connected link is restored first")
        #expect(plan.resume.map(\.restoringConnected) == [true, false])
        #expect(plan.resume.allSatisfy { $0.claim == .owner })
        #expect(plan.subscriptions.count == 1)
        #expect(plan.dormant.map(\.intent.peripheral) == [gone])
        #expect(plan.obsolete.map(\.intent.peripheral) == [gone])

        // Carrying the plan out: a restored machine adopts its link.
        let clock = ManualClock()
        let first = try #require(plan.resume.first)
        var machine = Machine(record: first.record, clock: clock)
        let actions = machine.start(restoringConnected: first.restoringConnected)
        #expect(actions.requests == [.lookUpKnownDevice(Fixtures.lockAddress)])
    }

    @Test func twoIdentifiersForOnePeripheralShareAndTheConnectedOneOwns() {
        let a = IdentifierState(identifier: Fixtures.identifier("a.first"), connections: [record(Fixtures.identifier("a.first"), lock, .pending)])
        let b = IdentifierState(identifier: Fixtures.identifier("b.second"), connections: [record(Fixtures.identifier("b.second"), lock, .connected)])
        var registry = OwnershipRegistry()
        let plan = StartupPlan(states: [a, b], registry: &registry)
        #expect(plan.resume.map(\.record.intent.identifier.rawValue) == ["b.second", "a.first"])
        #expect(plan.resume.last?.claim == .sharing(owner: ConnectionIntentID(identifier: Fixtures.identifier("b.second"), peripheral: lock)))
    }

    @Test func validationCatchesForeignEntries() {
        let wrong = IdentifierState(identifier: Fixtures.lockIdentifier, connections: [record(Fixtures.bandIdentifier, lock, .pending)])
        #expect(throws: DomainError.self) { try wrong.validate() }
        let twice = IdentifierState(identifier: Fixtures.lockIdentifier, connections: [record(Fixtures.lockIdentifier, lock, .pending), record(Fixtures.lockIdentifier, lock, .connected)])
        #expect(throws: DomainError.self) { try twice.validate() }
        let foreignSubscription = IdentifierState(identifier: Fixtures.lockIdentifier, subscriptions: [Subscription(identifier: logger, peripheral: lock, characteristic: hrm)])
        #expect(throws: DomainError.self) { try foreignSubscription.validate() }
    }
}
