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
        grace.stopWaiting(for: lock)
        let secondWait = grace.wait(for: lock)
        let second = try #require(secondWait)
        let old = grace.timerEnded(for: lock, generation: first)
        let current = grace.timerEnded(for: lock, generation: second)
        #expect(old == .stale && current == .lookAgain)
        #expect(!grace.isWaiting(for: lock))
    }

    static let state = CharacteristicKey(service: BluetoothUUID(shortValue: 0x180D), characteristic: BluetoothUUID(shortValue: 0x2A37))
    static let typo = CharacteristicKey(service: BluetoothUUID(shortValue: 0x180D), characteristic: BluetoothUUID(shortValue: 0x2A39))

    @Test func aConfirmedCharacteristicIsRediscoveredThreeTimesInARowThenWithABackOff() {
        var grace = GattGrace()
        grace.confirm(lock, Self.state)
        var decisions: [GattGrace.Decision?] = []
        for _ in 0...GattGrace.retryLimit {
            decisions.append(grace.stillMissing(lock, [Self.state: .databaseNotKnown], linkUp: true).decision)
        }
        #expect(decisions == (1...GattGrace.retryLimit).map { .rediscover(attempt: $0) } + [.rediscoverLater(looksLeft: 9, first: true)],
                "\(GattGrace.retryLimit) in a row, then a wait")
        // Then (gateway finding G8: waiting alone left a lock for good) a
        // reconnection after 10, 20, 40, 80, 160 looks, then every 300.
        var gaps: [Int] = [], looked = 1
        for _ in 0..<2_000 {
            switch grace.stillMissing(lock, [Self.state: .databaseNotKnown], linkUp: true).decision {
            case .rediscover(let attempt)?:
                #expect(attempt == GattGrace.retryLimit + gaps.count + 1)
                gaps.append(looked + 1)
                looked = 0
            case .rediscoverLater(let left, let first)?:
                looked += 1
                #expect(first == (looked == 1), "said once per wait")
                #expect(left == GattGrace.lateRediscoveryLooks(gaps.count) - looked)
            case let other:
                Issue.record("unexpected \(String(describing: other))")
            }
        }
        #expect(Array(gaps.prefix(8)) == [10, 20, 40, 80, 160, 300, 300, 300], "\(gaps)")
        grace.armed(lock, Self.state)
        #expect(grace.stillMissing(lock, [Self.state: .databaseNotKnown], linkUp: true).decision == .rediscover(attempt: 1), "armed: starts over")
        let noLink = grace.stillMissing(PeripheralID(), [Self.state: .databaseNotKnown], linkUp: false)
        #expect(noLink == GattGrace.Outcome(failed: [], decision: .wait), "no link, nothing to reconnect, nothing to judge")
    }

    @Test func aMissingCharacteristicIsReportedOnceUntilArmedOrForgotten() {
        var grace = GattGrace()
        let reports = (0..<3).map { _ in grace.reportMissing(lock, Self.state) }
        #expect(reports == [true, false, false])
        let other = grace.reportMissing(lock, Self.typo)
        #expect(other, "each characteristic once")
        grace.armed(lock, Self.state)
        let afterArmed = grace.reportMissing(lock, Self.state)
        #expect(afterArmed, "missing again after it was armed: said again")
        grace.forget(lock, Self.typo)
        let afterForgotten = grace.reportMissing(lock, Self.typo)
        #expect(afterForgotten)
    }

    /// Issue 21, item 9: the count started over whenever any characteristic
    /// of the peripheral was armed, so a typo beside a good subscription
    /// reconnected the link every 3 s for ever.
    @Test func armingAnotherCharacteristicDoesNotStartTheCountOver() {
        var grace = GattGrace()
        grace.confirm(lock, Self.typo)  // subscribed before a restart: relinkd cannot tell it is a typo
        var rediscoveries = 0
        for _ in 0..<10 {
            if case .rediscover? = grace.stillMissing(lock, [Self.typo: .databaseNotKnown], linkUp: true).decision { rediscoveries += 1 }
            grace.armed(lock, Self.state)  // the good one, after each reconnection
        }
        #expect(rediscoveries == GattGrace.retryLimit, "in 10 looks: the three in a row (the back-off's first would be the 13th)")
    }

    @Test func aCharacteristicTheKnownDatabaseLacksFailsAtOnce() {
        var grace = GattGrace()
        let outcome = grace.stillMissing(lock, [Self.typo: .notInDatabase], linkUp: true)
        #expect(outcome == GattGrace.Outcome(failed: [Self.typo], decision: nil), "no reconnection, nothing left to wait for")
        var confirmed = GattGrace()
        confirmed.confirm(lock, Self.typo)
        #expect(confirmed.stillMissing(lock, [Self.typo: .notInDatabase], linkUp: true).failed == [Self.typo], "the database says so")
    }

    @Test func aCharacteristicNeverConfirmedIsRediscoveredOnceThenFails() {
        var grace = GattGrace()
        let first = grace.stillMissing(lock, [Self.typo: .databaseNotKnown], linkUp: true)
        #expect(first == GattGrace.Outcome(failed: [], decision: .rediscover(attempt: 1)))
        let second = grace.stillMissing(lock, [Self.typo: .databaseNotKnown], linkUp: true)
        #expect(second == GattGrace.Outcome(failed: [Self.typo], decision: nil))
    }

    @Test func failingOneLeavesTheOthersAwaited() {
        var grace = GattGrace()
        grace.confirm(lock, Self.state)
        let outcome = grace.stillMissing(lock, [Self.typo: .notInDatabase, Self.state: .databaseNotKnown], linkUp: true)
        #expect(outcome == GattGrace.Outcome(failed: [Self.typo], decision: .rediscover(attempt: 1)))
    }

    @Test func theDatabaseIsKnownOnceServicesAreResolvedAndTheServicesCharacteristicsSeen() {
        let seen: Set<BluetoothUUID> = [Self.state.characteristic]
        #expect(GattGrace.absence(servicesResolved: true, characteristicsOfService: seen) == .notInDatabase)
        #expect(GattGrace.absence(servicesResolved: false, characteristicsOfService: seen) == .databaseNotKnown)
        #expect(GattGrace.absence(servicesResolved: true, characteristicsOfService: []) == .databaseNotKnown, "its service not seen (yet)")
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
