import RelinkModel
import Restoration
import Testing

/// Starts made before a relinkd restart (the store's `launch_start`) count
/// in the burst of the next relinkd's policy; those older than the window do not.
@Suite("Relaunch policy: starts before a restart")
struct RelaunchPolicyRestartTests {
    typealias Policy = RelaunchPolicy<ManualClock.Instant>
    static let name = "org.example.Lock"
    let door = id("front-door")

    func at(_ seconds: Double) -> ManualClock.Instant { ManualClock.Instant(offset: .milliseconds(Int64(seconds * 1000))) }

    @Test func restoredStartsInTheWindowCountInTheBurstAndOlderOnesDoNot() {
        var policy = Policy()
        // Four starts before the restart, one of them older than the window.
        policy.restoreStarts([Self.name: [at(1), at(20), at(25), at(29)]], now: at(40))
        #expect(policy.targets[Self.name]?.starts == [at(20), at(25), at(29)])
        #expect(policy.targets[Self.name]?.phase == .idle)
        // Two more fit in the burst of 5; the sixth is limited until 30 s after the first counted.
        guard case .start? = policy.eventWaiting(door, kind: "value-notified", busName: Self.name, now: at(40)).first else {
            Issue.record("the fourth start in the window is allowed"); return
        }
        _ = policy.startAnswered(Self.name, .failed("exited"), now: at(40.1))
        #expect(policy.timerFired(Self.name, now: at(40.6)).contains { if case .start = $0 { true } else { false } })
        _ = policy.startAnswered(Self.name, .failed("exited"), now: at(40.7))
        #expect(policy.timerFired(Self.name, now: at(41.7)) == [.limitReached(Self.name, starts: 5, until: at(50))])
        #expect(policy.targets[Self.name]?.phase == .limited(until: at(50)))
    }
}
