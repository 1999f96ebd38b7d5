import RelinkModel
import Restoration
import Testing

@Suite("GATT grace policy")
struct GattGraceTests {
    let lock = PeripheralID()

    @Test func aCharacteristicThatAppearsEndsTheWaitAndItsTimerIsStale() throws {
        var grace = GattGrace()
        let started = grace.wait(for: lock)
        let generation = try #require(started)
        let again = grace.wait(for: lock)
        #expect(again == nil, "one wait at a time")
        #expect(grace.isWaiting && grace.isWaiting(for: lock))
        let appeared = grace.appeared(on: lock), appearedAgain = grace.appeared(on: lock)
        #expect(appeared && !appearedAgain, "only once")
        let verdict = grace.timerEnded(for: lock, generation: generation)
        #expect(verdict == .stale)
    }

    @Test func aTimerOfAnEarlierWaitIsStale() throws {
        var grace = GattGrace()
        let firstWait = grace.wait(for: lock)
        let first = try #require(firstWait)
        grace.linkDown(lock)
        let secondWait = grace.wait(for: lock)
        let second = try #require(secondWait)
        let old = grace.timerEnded(for: lock, generation: first)
        let current = grace.timerEnded(for: lock, generation: second)
        #expect(old == .stale && current == .lookAgain)
        #expect(!grace.isWaiting(for: lock))
    }

    @Test func rediscoveryIsBoundedAndStartsOverOnceArmed() {
        var grace = GattGrace()
        var decisions: [GattGrace.Decision] = []
        for _ in 0...GattGrace.retryLimit { decisions.append(grace.stillMissing(lock, linkUp: true)) }
        #expect(decisions == (1...GattGrace.retryLimit).map { .rediscover(attempt: $0) } + [.wait], "at most \(GattGrace.retryLimit) in a row")
        grace.armed(lock)
        let afterArmed = grace.stillMissing(lock, linkUp: true)
        #expect(afterArmed == .rediscover(attempt: 1))
        let noLink = grace.stillMissing(PeripheralID(), linkUp: false)
        #expect(noLink == .wait, "no link, nothing to reconnect")
    }

    @Test func aResetForgetsEveryWait() {
        var grace = GattGrace()
        _ = grace.wait(for: lock)
        _ = grace.wait(for: PeripheralID())
        #expect(grace.waitingCount == 2)
        grace.reset()
        #expect(!grace.isWaiting)
    }
}
