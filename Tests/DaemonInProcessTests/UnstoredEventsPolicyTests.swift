@testable import RelinkDaemon
import RelinkModel
import RelinkStore
import Testing

/// ``UnstoredEvents``'s journal rate and its report's life cycle, by hand.
@Suite("Unstored events: journal rate and report")
struct UnstoredEventsPolicyTests {
    static let id = (try? RestoreIdentifier("band")) ?? { fatalError("valid") }()

    @Test func aStreamOfFailuresWritesOneLinePerIntervalThenOneOnRecovery() {
        var u = UnstoredEvents()
        let start = ContinuousClock.now
        var lines: [UnstoredEvents.Line] = []
        // 20 failures a second for 25 s, as a band at 20 Hz on a full disk.
        for n in 0..<500 {
            let now = start.advanced(by: .milliseconds(50 * n))
            if let line = u.commitFailed(lost: [Self.id: [Int64(n + 10)]], error: "disk full", now: now) { lines.append(line) }
        }
        #expect(lines.first == .started(error: "disk full"))
        #expect(lines.count == 3, "one line when it starts, one summary per 10 s: \(lines)")
        #expect(lines.dropFirst().allSatisfy { if case .still(let requests, let events, _) = $0 { requests == 200 && events == 200 } else { false } })
        let recovered = u.commitSucceeded(now: start.advanced(by: .seconds(30)))
        #expect(recovered == .recovered(requests: 500, events: 500, lasted: .seconds(30)))
        #expect(u.commitSucceeded(now: start.advanced(by: .seconds(31))) == nil)
        #expect(u.total == 500)
    }

    @Test func theReportWaitsForTheStoreAndComesBackWhenItFails() {
        var u = UnstoredEvents()
        let now = ContinuousClock.now
        _ = u.commitFailed(lost: [Self.id: [5, 6, 9]], error: "disk full", now: now)
        #expect(u.takeReport() == nil, "no report while the store refuses writes")
        _ = u.commitSucceeded(now: now)
        #expect(u.takeReport() == [.countUnstoredEvents(Self.id, count: 3, range: 5...9)])
        #expect(u.takeReport() == nil, "one report in flight")
        _ = u.commitFailed(lost: [Self.id: [12]], error: "disk full", now: now)
        u.reportDone(committed: false)
        _ = u.commitSucceeded(now: now)
        #expect(u.takeReport() == [.countUnstoredEvents(Self.id, count: 4, range: 5...12)], "a failed report is merged back")
        u.acknowledged(Self.id, through: 100)
        u.reportDone(committed: true)
        #expect(u.takeReport() == nil)
    }

    @Test func aRefusedRequestCountsItsEventsButTheStoreStillTakesWrites() {
        var u = UnstoredEvents()
        let line = u.commitFailed(lost: [Self.id: [3]], error: "unknown restore identifier", storage: false, now: .now)
        #expect(line == .refused(events: 1, error: "unknown restore identifier"))
        #expect(!u.refusing && u.total == 1)
        #expect(u.commitFailed(lost: [:], error: "invalid acknowledgement", storage: false, now: .now) == nil, "no events, nothing to say")
        #expect(u.takeReport() == [.countUnstoredEvents(Self.id, count: 1, range: 3...3)])
    }

    @Test func acknowledgedNumbersLeaveTheRangeButStayCounted() {
        var u = UnstoredEvents()
        let now = ContinuousClock.now
        _ = u.commitFailed(lost: [Self.id: [5, 6, 7]], error: "disk full", now: now)
        u.acknowledged(Self.id, through: 6)
        _ = u.commitSucceeded(now: now)
        #expect(u.takeReport() == [.countUnstoredEvents(Self.id, count: 3, range: 7...7)])
    }
}
