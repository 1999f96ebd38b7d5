@testable import RelinkDaemon
import Testing

/// The numbering and early-release rules (pure logic): what may go out
/// before its commit, in what order, and what a crash costs.
@Suite struct EventSequencerTests {
    @Test func afterACrashNumberingSkipsTheWindowAfterACleanStopItDoesNot() {
        #expect(EventSequencer(nextStored: 10, cleanStart: false).next == 10 + EventSequencer.window)
        #expect(EventSequencer(nextStored: 10, cleanStart: true).next == 10)
    }

    @Test func eventsWithinTheWindowGoOutAtOnceInOrder() {
        var s = EventSequencer(nextStored: 1, cleanStart: true)
        let a = s.number(kind: "a", payload: "{}")
        let b = s.number(kind: "b", payload: "{}")
        #expect(s.release(nextStored: 1).map(\.sequence) == [a, b])
        #expect(s.release(nextStored: 1).isEmpty, "each once")
        #expect(!s.settled, "shown, not yet stored")
        s.committed([a, b])
        #expect(s.recent.isEmpty)
        #expect(s.settled)
    }

    @Test func pastTheWindowEventsWaitForTheirCommitAndNothingOvertakes() {
        // Fresh after a crash: the first number is exactly at the window's end.
        var s = EventSequencer(nextStored: 1, cleanStart: false)
        let first = s.number(kind: "connected", payload: "{}")
        #expect(s.release(nextStored: 1).isEmpty, "not yet covered by a stored number")
        let second = s.number(kind: "value", payload: "{}")
        // Its commit stores `first`: both may go now, in order.
        #expect(s.release(nextStored: 1, committedThrough: first).map(\.sequence) == [first])
        #expect(s.release(nextStored: first + 1).map(\.sequence) == [second])
    }

    @Test func aFailedCommitForgetsItsEventsAndReportsTheUnseen() {
        var s = EventSequencer(nextStored: 1, cleanStart: false)
        let a = s.number(kind: "a", payload: "{}")  // waits (past the window)
        let lost = s.failed([a])
        #expect(lost.map(\.sequence) == [a])
        #expect(s.settled, "nobody saw it")
        var t = EventSequencer(nextStored: 1, cleanStart: true)
        let b = t.number(kind: "b", payload: "{}")
        _ = t.release(nextStored: 1)
        #expect(t.failed([b]).isEmpty)
        #expect(!t.settled, "shown and not stored: the next start must skip")
        #expect(t.number(kind: "c", payload: "{}") == b + 1, "never reused")
    }

    @Test func aNewClientGetsTheReleasedEventsAboveItsPosition() {
        var s = EventSequencer(nextStored: 5, cleanStart: true)
        let a = s.number(kind: "a", payload: "{}")
        let b = s.number(kind: "b", payload: "{}")
        _ = s.release(nextStored: 5)
        #expect(s.released(after: a).map(\.sequence) == [b])
        #expect(s.released(after: 0).map(\.sequence) == [a, b])
    }

    @Test func commitsOutOfOrderOrOfChosenNumbersKeepTheRestInOrder() {
        var s = EventSequencer(nextStored: 1, cleanStart: true)
        let numbers = (0..<6).map { _ in s.number(kind: "v", payload: "{}") }
        #expect(s.release(nextStored: 1).map(\.sequence) == numbers)
        s.committed([numbers[2], numbers[3], 999])        // the middle, and a number chosen elsewhere
        #expect(s.recent.map(\.sequence) == [numbers[0], numbers[1], numbers[4], numbers[5]])
        #expect(!s.settled)
        s.committed([numbers[0], numbers[1]])
        let seventh = s.number(kind: "v", payload: "{}")
        #expect(s.release(nextStored: 1).map(\.sequence) == [seventh], "only the new one: the rest went out before")
        s.committed([numbers[4], numbers[5], seventh])
        #expect(s.recent.isEmpty && s.settled)
    }

    @Test func aBacklogPastTheWindowGoesOutInOrderAsItsCommitsArrive() {
        // 1,000 events numbered while nothing is stored: the window's worth
        // goes at once, the rest as commits store them, each once.
        var s = EventSequencer(nextStored: 1, cleanStart: true)
        let numbers = (0..<1000).map { _ in s.number(kind: "v", payload: "{}") }
        var seen = s.release(nextStored: 1).map(\.sequence)
        #expect(seen == Array(numbers.prefix(Int(EventSequencer.window))))
        for chunk in stride(from: 0, to: numbers.count, by: 100) {
            let stored = Array(numbers[chunk..<min(chunk + 100, numbers.count)])
            seen += s.release(nextStored: 1, committedThrough: stored.last ?? 0).map(\.sequence)
            s.committed(Set(stored))
        }
        #expect(seen == numbers)
        #expect(s.recent.isEmpty && s.settled)
    }

    @Test func aFailedCommitInsideTheReleasedOnesLeavesTheRestReleasable() {
        var s = EventSequencer(nextStored: 1, cleanStart: true)
        let a = s.number(kind: "a", payload: "{}"), b = s.number(kind: "b", payload: "{}")
        #expect(s.release(nextStored: 1).map(\.sequence) == [a, b])
        let c = s.number(kind: "c", payload: "{}")
        #expect(s.failed([a]).isEmpty, "a was shown")
        #expect(s.release(nextStored: 1).map(\.sequence) == [c], "b is not sent twice")
        #expect(s.released(after: 0).map(\.sequence) == [b, c])
    }
}
