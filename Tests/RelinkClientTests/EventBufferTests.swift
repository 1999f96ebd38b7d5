import Testing

@testable import RelinkClient

/// The bounded buffer behind `RelinkCentral.events`.
@Suite struct EventBufferTests {
    static func event(_ sequence: UInt64) -> RelinkClientEvent {
        RelinkClientEvent(sequence: sequence, kind: "value", payloadJSON: "{}")
    }

    @Test func holdsAtMostItsLimitAndSaysWhenFull() async {
        let buffer = RelinkEventBuffer(limit: 4)
        #expect((1...4).map { buffer.offer(Self.event($0)) } == Array(repeating: .taken, count: 4))
        #expect(buffer.offer(Self.event(5)) == .full)
        #expect(buffer.count == 4)
        #expect(await buffer.next()?.sequence == 1)
        #expect(buffer.offer(Self.event(5)) == .taken)
        #expect(buffer.count == 4)
    }

    @Test func roomIsSignalledOnceTheReaderTookHalf() async {
        let buffer = RelinkEventBuffer(limit: 4)
        for s in UInt64(1)...4 { _ = buffer.offer(Self.event(s)) }
        let room = Task { await buffer.waitForRoom() }
        #expect(await buffer.next()?.sequence == 1)   // 3 held: not yet
        #expect(await buffer.next()?.sequence == 2)   // 2 held: room
        await room.value
        #expect(buffer.count == 2)
    }

    @Test(.timeLimit(.minutes(1))) func aWaitingReaderGetsTheNextOfferAndFinishHandsOutWhatIsHeld() async {
        let buffer = RelinkEventBuffer(limit: 2)
        let reader = Task { await buffer.next()?.sequence }
        while !buffer.readerWaiting { await Task.yield() }
        #expect(buffer.offer(Self.event(7)) == .taken)
        #expect(buffer.count == 0)
        #expect(await reader.value == 7)
        _ = buffer.offer(Self.event(8))
        buffer.finish()
        #expect(buffer.offer(Self.event(9)) == .finished)
        #expect(await buffer.next()?.sequence == 8)
        #expect(await buffer.next() == nil)
    }

    @Test func aCancelledReaderGetsNil() async {
        let buffer = RelinkEventBuffer(limit: 2)
        let reader = Task { await buffer.next() }
        reader.cancel()
        #expect(await reader.value == nil)
        #expect(buffer.offer(Self.event(1)) == .taken)
        #expect(buffer.count == 1)
    }
}
