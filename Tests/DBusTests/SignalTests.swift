import Foundation
import Testing

@testable import DBus
import RelinkModel

@Suite struct SignalTests {
    @Test func aBurstOf100000SignalsArrivesInOrder() async throws {
        try await withTestBus { bus in
            let emitter = try await bus.connect()
            let receiver = try await bus.connect()
            let count: UInt32 = 100_000
            let signals = try await receiver.signals(
                matching: SignalMatch(sender: emitter.uniqueName, interface: "org.relink.Test.Burst", member: "Tick"))
            let path = try ObjectPath("/burst")
            for i in 0..<count {
                try emitter.emitSignal(path: path, interface: "org.relink.Test.Burst", member: "Tick", arguments: [.uint32(i), .string("payload")])
            }
            // The backlog is visible while nobody consumes.
            try await eventually(timeout: .seconds(10), "a backlog") { signals.pending > 0 }
            #expect(signals.pending > 0)
            var expected: UInt32 = 0
            for try await m in signals {
                let (n, _) = try m.decode(UInt32.self, String.self)
                if n != expected {
                    Issue.record("signal \(n) arrived when \(expected) was expected")
                    break
                }
                expected += 1
                if expected == count { break }
            }
            #expect(expected == count)
            #expect(signals.pending == 0)
        }
    }

    @Test func rulesAreAppliedLocallyAndRemovedWhenTheStreamEnds() async throws {
        try await withTestBus { bus in
            let emitter = try await bus.connect()
            let receiver = try await bus.connect()
            let path = try ObjectPath("/x")
            let onlyA = try await receiver.signals(matching: SignalMatch(interface: "org.relink.Test.S", member: "A"))
            let onlyArg = try await receiver.signals(matching: SignalMatch(interface: "org.relink.Test.S", arguments: [0: "yes"]))
            try emitter.emitSignal(path: path, interface: "org.relink.Test.S", member: "B", arguments: [.string("yes")])
            try emitter.emitSignal(path: path, interface: "org.relink.Test.S", member: "A", arguments: [.string("no")])
            var a = onlyA.makeAsyncIterator()
            let first = try await a.next()
            #expect(first?.member == "A")
            var b = onlyArg.makeAsyncIterator()
            let second = try await b.next()
            #expect(second?.member == "B")
            // Ending the subscription removes it locally and on the bus.
            onlyA.cancel()
            #expect(try await a.next() == nil)
            #expect(receiver.loop.state.withLock { $0.subscribers.count } == 1)
        }
    }

    @Test func wellKnownSenderIsFollowedAcrossOwnerChanges() async throws {
        try await withTestBus { bus in
            let receiver = try await bus.connect()
            let name = "org.relink.Test.Restarting"
            let signals = try await receiver.signals(matching: SignalMatch(sender: name, interface: "org.relink.Test.S"))
            var it = signals.makeAsyncIterator()
            let path = try ObjectPath("/x")
            for generation in 0..<2 {
                let owner = try await bus.connect()
                #expect(try await owner.requestName(name) == .primaryOwner)
                // An unrelated peer's signal on the same interface must not pass the sender rule.
                let stranger = try await bus.connect()
                try stranger.emitSignal(path: path, interface: "org.relink.Test.S", member: "Stranger")
                // A round trip to the bus: the daemon handles a connection's
                // messages in order, so the stranger's signal is routed
                // (and queued ahead of the owner's) before this returns.
                _ = try await stranger.nameOwner(of: name)
                try owner.emitSignal(path: path, interface: "org.relink.Test.S", member: "Gen\(generation)")
                let m = try await it.next()
                #expect(m?.member == "Gen\(generation)")
                #expect(m?.sender == owner.uniqueName)
                owner.close()
                stranger.close()
                try await eventually(timeout: .seconds(10), "\(name) released") {
                    (try? await receiver.nameOwner(of: name)).flatMap { $0 } == nil
                }
            }
        }
    }

    @Test func nameOwnerChangesAreReported() async throws {
        try await withTestBus { bus in
            let watcher = try await bus.connect()
            let name = "org.relink.Test.Watched"
            let changes = try await watcher.nameOwnerChanges(for: name)
            var it = changes.makeAsyncIterator()
            let owner = try await bus.connect()
            #expect(try await owner.requestName(name) == .primaryOwner)
            #expect(try await owner.requestName(name) == .alreadyOwner)
            let other = try await bus.connect()
            #expect(try await other.requestName(name) == .exists)
            let acquired = try await it.next()
            #expect(acquired == NameOwnerChange(name: name, oldOwner: nil, newOwner: owner.uniqueName))
            #expect(try await watcher.nameOwner(of: name) == owner.uniqueName)
            #expect(try await owner.releaseName(name) == 1)
            let released = try await it.next()
            #expect(released == NameOwnerChange(name: name, oldOwner: owner.uniqueName, newOwner: nil))
            #expect(try await watcher.nameOwner(of: name) == nil)
        }
    }
}
