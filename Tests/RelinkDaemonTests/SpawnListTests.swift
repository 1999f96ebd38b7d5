import RelinkModel
import Restoration
import Testing
@testable import RelinkDaemon

/// A machine's timer cancelled before the loop starts its task is never
/// started (issue 31: at start-up each intent's first two steps scheduled
/// and cancelled one, and the sleeping tasks held a third of relinkd's
/// memory). Counted, not timed.
@Suite struct SpawnListTests {
    @Test func timersCancelledBeforeTheyStartAreNotStarted() async throws {
        let intents = try (0..<3).map { ConnectionIntentID(identifier: try RestoreIdentifier("org.example.app\($0)"), peripheral: PeripheralID()) }
        var list = SpawnList()
        #expect(list.isEmpty)
        var expected: [String] = []
        list.append { [.startSpawned] }
        expected.append("other")
        for intent in intents {
            for id in UInt64(0)..<3 {
                let token = TimerToken(id: id, purpose: .step)
                list.appendTimer(intent, token) { [.machine(intent, .timerFired(token))] }
                if id == 2 { expected.append("\(intent) \(id)") }
            }
            // The first two steps ended within the same input.
            let first = list.cancelTimer(intent, TimerToken(id: 0, purpose: .step))
            let second = list.cancelTimer(intent, TimerToken(id: 1, purpose: .step))
            let again = list.cancelTimer(intent, TimerToken(id: 1, purpose: .step))
            #expect(first && second)
            #expect(!again, "cancelled once")
        }
        list.append { [.startSpawned] }
        expected.append("other")
        #expect(!list.isEmpty)
        let work = list.take()
        #expect(list.isEmpty, "taken")
        let late = list.cancelTimer(intents[0], TimerToken(id: 2, purpose: .step))
        #expect(!late, "started: the machine ignores it when it fires")
        var started: [String] = []
        for item in work {
            for input in await item() {
                switch input {
                case .machine(let intent, .timerFired(let token)): started.append("\(intent) \(token.id)")
                default: started.append("other")
                }
            }
        }
        #expect(started == expected, "the rest in order, one task each")
    }

    @Test func onlyCancelledTimersLeftIsEmpty() throws {
        let intent = ConnectionIntentID(identifier: try RestoreIdentifier("org.example.app"), peripheral: PeripheralID())
        var list = SpawnList()
        list.appendTimer(intent, TimerToken(id: 0, purpose: .deadline)) { [] }
        list.cancelTimer(intent, TimerToken(id: 0, purpose: .deadline))
        #expect(list.isEmpty)
        #expect(list.take().isEmpty)
    }
}
