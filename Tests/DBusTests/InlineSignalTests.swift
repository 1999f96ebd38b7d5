import Foundation
import Testing

@testable import DBus
import RelinkModel

/// An actor that lives on a connection's I/O thread.
private actor Recorder {
    nonisolated let unownedExecutor: UnownedSerialExecutor
    let loop: ConnectionLoop
    var received: [(number: UInt32, inline: Bool)] = []
    var offThread = 0

    init(_ connection: Connection) {
        unownedExecutor = connection.serialExecutor
        loop = connection.loop
    }

    /// The inline handler's side: refuses every tenth signal.
    func offer(_ m: Message) -> Bool {
        guard let (n) = try? m.decode(UInt32.self), n % 10 != 0 else { return false }
        note(n, inline: true)
        return true
    }

    func note(_ n: UInt32, inline: Bool) {
        if !loop.isCurrent { offThread += 1 }
        received.append((n, inline))
    }

    var onLoopThread: Bool { loop.isCurrent }
}

@Suite struct InlineSignalTests {
    static let interface = "org.relink.Test.Inline"

    @Test func inlineSignalsNeverOvertakeOnesTheStreamStillHolds() async throws {
        try await withTestBus { bus in
            let emitter = try await bus.connect()
            let receiver = try await bus.connect()
            let recorder = Recorder(receiver)
            let signals = try await receiver.signals(matching: SignalMatch(sender: emitter.uniqueName, interface: Self.interface)) { m in
                recorder.assumeIsolated { $0.offer(m) }
            }
            let count: UInt32 = 60
            let consumer = Task {
                for try await m in signals {
                    let n = try m.decode(UInt32.self)
                    // A slow consumer: a signal read meanwhile must wait for it.
                    // (A fake's timing, kept: Tests/README.md.)
                    try await Task.sleep(for: .milliseconds(50))
                    await recorder.note(n, inline: false)
                    if n == count - 1 { return }
                }
            }
            let path = try ObjectPath("/inline")
            func send(_ n: UInt32) throws {
                try emitter.emitSignal(path: path, interface: Self.interface, member: "Tick", arguments: [.uint32(n)])
            }
            func arrived(_ n: UInt32) async throws {
                try await eventually(timeout: .seconds(20), "signal \(n) received") {
                    await recorder.received.contains(where: { $0.number == n })
                }
            }
            var n: UInt32 = 0
            while n < count {
                try send(n)
                if n % 10 == 0 {
                    // Refused inline: it goes to the stream, where the slow
                    // consumer holds it while the next one is read.
                    try send(n + 1)
                    n += 1
                }
                try await arrived(n)
                n += 1
            }
            consumer.cancel()
            let received = await recorder.received
            #expect(received.map(\.number) == Array(0..<count), "every signal once, in bus order")
            // Every tenth was refused inline and took the stream, and so did
            // the one right after it; the others came to an idle consumer.
            let inline = received.filter(\.inline).count
            #expect(inline > 0)
            #expect(received.count - inline >= 2 * Int(count) / 10)
            #expect(await recorder.offThread == 0)
        }
    }

    @Test func anActorOnTheSerialExecutorRunsOnTheIOThreadAndAfterClose() async throws {
        try await withTestBus { bus in
            let receiver = try await bus.connect()
            let recorder = Recorder(receiver)
            #expect(await recorder.onLoopThread)
            #expect(!receiver.loop.isCurrent)
            receiver.close()
            // Closed: jobs run on the private queue, which counts as the executor.
            for _ in 0..<100 { await recorder.note(0, inline: false) }
            #expect(await recorder.received.count == 100)
            #expect(await recorder.offThread == 0)
        }
    }
}
