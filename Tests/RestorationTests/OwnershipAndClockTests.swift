import Testing
@testable import Restoration
import RelinkModel

@Suite("Ownership registry")
struct OwnershipRegistryTests {
    let first = ConnectionIntentID(identifier: Fixtures.lockIdentifier, peripheral: Fixtures.lockPeripheral)
    let second = ConnectionIntentID(identifier: Fixtures.bandIdentifier, peripheral: Fixtures.lockPeripheral)
    let third = ConnectionIntentID(identifier: Fixtures.identifier("org.example.third"), peripheral: Fixtures.lockPeripheral)

    @Test func firstClaimOwnsLaterOnesShare() {
        var registry = OwnershipRegistry()
        #expect(registry.claim(first) == .owner)
        #expect(registry.claim(second) == .sharing(owner: first))
        #expect(registry.claim(first) == .owner, "claiming again is idempotent")
        #expect(registry.claim(third) == .sharing(owner: first))
        #expect(registry.sharers(of: Fixtures.lockPeripheral) == [second, third])
        #expect(registry.isShared(beyond: first))
    }

    @Test func releasePassesOwnershipInClaimOrder() {
        var registry = OwnershipRegistry()
        _ = registry.claim(first)
        _ = registry.claim(second)
        _ = registry.claim(third)
        #expect(registry.release(third) == nil, "a sharer leaving changes no owner")
        #expect(registry.release(first) == second)
        #expect(registry.owner(of: Fixtures.lockPeripheral) == second)
        #expect(!registry.isShared(beyond: second))
        #expect(registry.release(second) == nil)
        #expect(registry.owner(of: Fixtures.lockPeripheral) == nil)
        #expect(registry.release(second) == nil)
    }

    @Test func otherPeripheralsAreIndependent() {
        var registry = OwnershipRegistry()
        let band = ConnectionIntentID(identifier: Fixtures.lockIdentifier, peripheral: PeripheralID())
        #expect(registry.claim(first) == .owner)
        #expect(registry.claim(band) == .owner)
    }
}

@Suite("Manual clock")
struct ManualClockTests {
    @Test func sleepersWakeOnlyWhenTimeReachesThem() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(10))) }
        while clock.sleeperCount == 0 { await Task.yield() }
        clock.advance(by: .seconds(9))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .seconds(10))
    }

    @Test func cancelledSleeperThrowsAndIsRemoved() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(10))) }
        while clock.sleeperCount == 0 { await Task.yield() }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func pastDeadlineReturnsAtOnceAndTimeNeverGoesBack() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-1)))
        clock.advance(to: ManualClock.Instant(offset: .seconds(1)))
        #expect(clock.now.offset == .seconds(5))
    }
}
