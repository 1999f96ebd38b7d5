import Testing
@testable import Restoration
import RelinkModel

@Suite("Subscription planner")
struct SubscriptionPlannerTests {
    let lock = Fixtures.lockPeripheral
    let state = CharacteristicKey(service: Fixtures.lockService, characteristic: Fixtures.uuid("fff1"))
    let battery = CharacteristicKey(service: Fixtures.uuid("180F"), characteristic: Fixtures.uuid("2A19"))
    let app = Fixtures.lockIdentifier
    let logger = Fixtures.identifier("org.example.logger")

    func subscription(_ identifier: RestoreIdentifier, _ key: CharacteristicKey) -> Subscription {
        Subscription(identifier: identifier, peripheral: lock, characteristic: key)
    }

    @Test func sharedCharacteristicIsStartedOnceAndRoutedToEachIdentifierOnce() {
        var planner = SubscriptionPlanner()
        #expect(planner.subscribe(subscription(app, state)).isEmpty, "nothing to do while the link is down")
        #expect(planner.subscribe(subscription(logger, state)).isEmpty)
        #expect(planner.subscribe(subscription(logger, battery)).isEmpty)
        #expect(planner.subscribe(subscription(logger, battery)).isEmpty, "subscribing twice is one subscription")
        let commands = planner.linkUp(lock)
        #expect(Set(commands) == [.startNotify(lock, state), .startNotify(lock, battery)])
        #expect(planner.route(lock, characteristic: state) == [app, logger].sorted())
        #expect(planner.route(lock, characteristic: battery) == [logger])
    }

    @Test func wantedServicesFollowTheSubscriptions() {
        var planner = SubscriptionPlanner()
        #expect(planner.wantedServices(of: lock).isEmpty)
        _ = planner.subscribe(subscription(app, state))
        _ = planner.subscribe(subscription(logger, battery))
        #expect(planner.wantedServices(of: lock) == [Fixtures.lockService, Fixtures.uuid("180F")])
        _ = planner.unsubscribe(subscription(logger, battery))
        #expect(planner.wantedServices(of: lock) == [Fixtures.lockService])
        #expect(planner.wantedServices(of: PeripheralID()).isEmpty)
    }

    @Test func linkUpTwiceForTheSameLinkStartsNothingMore() {
        var planner = SubscriptionPlanner()
        _ = planner.subscribe(subscription(app, state))
        #expect(planner.linkUp(lock).count == 1)
        #expect(planner.linkUp(lock).isEmpty, "a second intent sharing the link re-arms nothing")
    }

    @Test func reconnectsNeverDoubleAnything() {
        var planner = SubscriptionPlanner()
        _ = planner.subscribe(subscription(app, state))
        _ = planner.subscribe(subscription(logger, state))
        var starts = 0
        for _ in 0 ..< 25 {
            starts += planner.linkUp(lock).count
            starts += planner.linkUp(lock).count
            #expect(planner.route(lock, characteristic: state) == [app, logger].sorted())
            planner.linkDown(lock)
        }
        #expect(starts == 25, "exactly one StartNotify per characteristic per link")
    }

    @Test func subscribingWhileUpStartsOnlyForTheFirstIdentifier() {
        var planner = SubscriptionPlanner()
        _ = planner.linkUp(lock)
        #expect(planner.subscribe(subscription(app, state)) == [.startNotify(lock, state)])
        #expect(planner.subscribe(subscription(logger, state)).isEmpty)
        #expect(planner.unsubscribe(subscription(app, state)).isEmpty, "the logger still wants it")
        #expect(planner.unsubscribe(subscription(logger, state)) == [.stopNotify(lock, state)])
        #expect(planner.route(lock, characteristic: state).isEmpty)
        #expect(planner.unsubscribe(subscription(logger, state)).isEmpty)
    }

    @Test func resetAllAndFailedStartsAreArmedAgain() {
        var planner = SubscriptionPlanner()
        _ = planner.subscribe(subscription(app, state))
        _ = planner.subscribe(subscription(app, battery))
        #expect(planner.linkUp(lock).count == 2)
        planner.startNotifyFailed(lock, battery)
        #expect(planner.linkUp(lock) == [.startNotify(lock, battery)])
        planner.resetAll()
        #expect(planner.armedCharacteristics(of: lock).isEmpty)
        #expect(planner.linkUp(lock).count == 2, "after bluetoothd or relinkd restarts every session is made again")
    }

    @Test func removingAnIdentifierStopsWhatOnlyItWanted() {
        var planner = SubscriptionPlanner()
        _ = planner.subscribe(subscription(app, state))
        _ = planner.subscribe(subscription(logger, state))
        _ = planner.subscribe(subscription(logger, battery))
        _ = planner.linkUp(lock)
        #expect(planner.removeAll(of: logger) == [.stopNotify(lock, battery)])
        #expect(planner.subscriptions == [subscription(app, state)])
    }

    @Test func unsubscribedCharacteristicRoutesNowhere() {
        let planner = SubscriptionPlanner()
        #expect(planner.route(lock, characteristic: state).isEmpty)
    }
}
