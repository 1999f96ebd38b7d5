import Testing
@testable import Restoration
import RelinkModel

/// The planner's per-peripheral questions (issue 31: start-up asked them
/// once per peripheral through ``SubscriptionPlanner/subscriptions``, the
/// whole set built each time, which made it quadratic) answer what that set,
/// filtered, answers, through subscribe, unsubscribe and removeAll.
@Suite("Subscription planner queries")
struct SubscriptionPlannerQueryTests {
    @Test func perPeripheralAnswersAreTheWholeSetFiltered() throws {
        let peripherals = (0..<6).map { _ in PeripheralID() }
        let ids = try (0..<5).map { try RestoreIdentifier("org.example.app\($0)") }
        let keys = (1...4).map { CharacteristicKey(service: Fixtures.uuid("180F"), characteristic: Fixtures.uuid("2A1\($0)")) }
        var planner = SubscriptionPlanner()
        var all: [Subscription] = []
        for (i, p) in peripherals.enumerated() where i != 5 {
            for (j, id) in ids.enumerated() where (i + j) % 3 != 0 {
                for (k, key) in keys.enumerated() where (i + j + k) % 2 == 0 { all.append(Subscription(identifier: id, peripheral: p, characteristic: key)) }
            }
        }
        func check() {
            let set = planner.subscriptions
            for p in peripherals {
                #expect(planner.identifiers(subscribedOn: p) == Set(set.filter { $0.peripheral == p }.map(\.identifier)))
            }
            #expect(planner.subscribedPeripherals == Set(set.map(\.peripheral)))
            for s in all { #expect(planner.contains(s) == set.contains(s)) }
        }
        for s in all { _ = planner.subscribe(s) }
        check()
        for s in all.enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) { _ = planner.unsubscribe(s) }
        check()
        _ = planner.removeAll(of: ids[1])
        check()
        for s in all { _ = planner.unsubscribe(s) }
        check()
        #expect(planner.subscribedPeripherals.isEmpty)
    }
}
