@testable import RelinkClient
import Testing

/// `canSendWriteWithoutResponse`'s rule, without a bus: a refusal closes
/// the stream until relinkd's next `ReadyToWrite`, unless that signal came
/// while the refused write was on its way.
@Suite struct WriteStreamGateTests {
    private func canSend(_ gate: RelinkWriteStream.Gate) -> Bool { gate.state.withLock { $0.canSend } }

    @Test func aRefusalClosesTheStreamUntilTheNextReadyToWrite() {
        let gate = RelinkWriteStream.Gate()
        #expect(canSend(gate), "open at first")
        let seen = gate.signalsSeen
        gate.refused(seen: seen)
        #expect(!canSend(gate), "refused: closed")
        gate.refused(seen: seen)
        #expect(!canSend(gate))
        gate.open(ended: false)
        #expect(canSend(gate), "ReadyToWrite opens it")
        #expect(gate.signalsSeen == seen + 1)
    }

    @Test func aReadyToWriteThatCameWhileTheWriteWasOnItsWayIsNotHiddenByItsRefusal() {
        let gate = RelinkWriteStream.Gate()
        let seen = gate.signalsSeen
        gate.refused(seen: seen)
        let sentWhileClosed = gate.signalsSeen  // a write sent now ...
        gate.open(ended: false)  // ... the signal overtakes its refusal
        gate.refused(seen: sentWhileClosed)
        #expect(canSend(gate), "the refusal is older than the signal")
        gate.refused(seen: gate.signalsSeen)
        #expect(!canSend(gate), "a refusal of a write sent after the signal closes it")
    }
}
