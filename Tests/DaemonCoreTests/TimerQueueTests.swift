import DaemonCore
import RelinkModel
import Restoration
import Testing

/// The machines' timers in one queue: the order they fire in, what a
/// cancellation or a reused token does, against a plain list as the model.
@Suite struct TimerQueueTests {
    typealias Queue = TimerQueue<ManualClock.Instant>

    static func at(_ seconds: Int) -> ManualClock.Instant { ManualClock.Instant(offset: .seconds(seconds)) }
    static func intent(_ name: String) throws -> ConnectionIntentID {
        ConnectionIntentID(identifier: try RestoreIdentifier(name), peripheral: PeripheralID())
    }
    static func step(_ id: UInt64) -> TimerToken { TimerToken(id: id, purpose: .step) }

    @Test func dueTimersFireByInstantThenInTheOrderScheduled() throws {
        let lock = try Self.intent("lock"), band = try Self.intent("band")
        var queue = Queue()
        queue.schedule(lock, Self.step(1), at: Self.at(30))
        queue.schedule(band, Self.step(1), at: Self.at(10))
        queue.schedule(lock, Self.step(2), at: Self.at(10))
        queue.schedule(band, Self.step(2), at: Self.at(40))
        let next1 = queue.nextInstant()
        #expect(next1 == Self.at(10))
        let tooEarly = queue.takeDue(at: Self.at(9))
        #expect(tooEarly.isEmpty)
        let due = queue.takeDue(at: Self.at(30))
        #expect(due == [.init(intent: band, token: Self.step(1)), .init(intent: lock, token: Self.step(2)), .init(intent: lock, token: Self.step(1))])
        #expect(queue.count == 1)
        let next2 = queue.nextInstant()
        #expect(next2 == Self.at(40))
    }

    @Test func aCancelledTimerNeverFiresAndIsNotTheEarliest() throws {
        let lock = try Self.intent("lock")
        var queue = Queue()
        queue.schedule(lock, Self.step(1), at: Self.at(5))
        queue.schedule(lock, Self.step(2), at: Self.at(20))
        let pending = queue.cancel(lock, Self.step(1))
        #expect(pending)
        let again = queue.cancel(lock, Self.step(1))
        #expect(!again)
        let next3 = queue.nextInstant()
        #expect(next3 == Self.at(20))
        let fired = queue.takeDue(at: Self.at(100))
        #expect(fired == [.init(intent: lock, token: Self.step(2))])
        let next4 = queue.nextInstant()
        #expect(next4 == nil)
        #expect(queue.count == 0)
    }

    /// A machine made again for the same intent starts its tokens over: the
    /// old machine's timer with that token must not fire into the new one.
    @Test func aTokenScheduledAgainReplacesTheEarlierTimer() throws {
        let lock = try Self.intent("lock")
        var queue = Queue()
        queue.schedule(lock, Self.step(1), at: Self.at(5))
        queue.schedule(lock, Self.step(1), at: Self.at(50))
        #expect(queue.count == 1)
        let next5 = queue.nextInstant()
        #expect(next5 == Self.at(50))
        let oldInstant = queue.takeDue(at: Self.at(10))
        #expect(oldInstant.isEmpty)
        let newInstant = queue.takeDue(at: Self.at(50))
        #expect(newInstant == [.init(intent: lock, token: Self.step(1))])
    }

    @Test func aLimitLeavesTheRestDueForTheNextTake() throws {
        let lock = try Self.intent("lock")
        var queue = Queue()
        for id in 1...10 { queue.schedule(lock, Self.step(UInt64(id)), at: Self.at(1)) }
        let first = queue.takeDue(at: Self.at(1), limit: 4)
        #expect(first.map(\.token.id) == [1, 2, 3, 4])
        let next6 = queue.nextInstant()
        #expect(next6 == Self.at(1))
        let second = queue.takeDue(at: Self.at(1), limit: 4)
        #expect(second.map(\.token.id) == [5, 6, 7, 8])
        let third = queue.takeDue(at: Self.at(1), limit: 4)
        #expect(third.map(\.token.id) == [9, 10])
    }

    /// Thousands of random schedules, cancellations, reuses and takes (with
    /// the compaction they cause) against a plain list sorted each time.
    @Test func agreesWithAPlainListUnderRandomUse() throws {
        let intents = try (0..<8).map { try Self.intent("app\($0)") }
        var rng = SplitMix64(seed: 0x5eed)
        var queue = Queue()
        var model: [(instant: Int, order: Int, due: Queue.Due)] = []
        var order = 0, now = 0
        for _ in 0..<20_000 {
            let intent = intents[Int(rng.next() % 8)]
            let token = Self.step(rng.next() % 40)
            switch rng.next() % 10 {
            case 0..<5:
                let instant = now + Int(rng.next() % 100)
                order += 1
                model.removeAll { $0.due == .init(intent: intent, token: token) }
                model.append((instant, order, .init(intent: intent, token: token)))
                queue.schedule(intent, token, at: Self.at(instant))
            case 5..<8:
                let had = model.contains { $0.due == .init(intent: intent, token: token) }
                model.removeAll { $0.due == .init(intent: intent, token: token) }
                let cancelled = queue.cancel(intent, token)
                #expect(cancelled == had)
            default:
                now += Int(rng.next() % 20)
                let limit = Int(rng.next() % 6) + 1
                model.sort { ($0.instant, $0.order) < ($1.instant, $1.order) }
                let expected = model.prefix { $0.instant <= now }.prefix(limit)
                model.removeFirst(expected.count)
                let taken = queue.takeDue(at: Self.at(now), limit: limit)
                #expect(taken == expected.map(\.due))
            }
            #expect(queue.count == model.count)
            // Asked now and then: timers scheduled and cancelled between two
            // questions never enter the heap.
            if rng.next() % 3 == 0 {
                let next = queue.nextInstant()
                #expect(next == model.map(\.instant).min().map(Self.at))
            }
        }
    }
}

