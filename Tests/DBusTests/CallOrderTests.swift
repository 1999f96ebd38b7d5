import Foundation
import Synchronization
import Testing

@testable import DBus

/// A service whose `Append` is ordered: it records each call's serial when
/// it applies it, after a few random suspensions that give later calls
/// every chance to overtake it if dispatch did not keep the sender's order.
private final class OrderService: Sendable {
    static let name = "org.relink.Test.Order"
    static let path = ObjectPath(trusted: "/order")
    static let interface = "org.relink.Test.Order"

    final class State: Sendable {
        /// (sender, serial, argument) of each applied `Append`, in the order applied.
        let applied = Mutex<[(String, UInt32, UInt32)]>([])
        let waiters = Mutex<[String: CheckedContinuation<String, Never>]>([:])
        let object = Mutex<ExportedObject?>(nil)

        func append(_ call: MethodCall) async throws {
            let value = try call.decode(UInt32.self)
            for _ in 0..<Int.random(in: 0...3) { await Task.yield() }
            let count = applied.withLock {
                $0.append((call.sender, call.message.serial, value))
                return $0.count
            }
            try object.withLock { $0 }?.setValue(.uint32(UInt32(count)), of: "Count", in: OrderService.interface)
        }

        /// Waits for `Release(name)`, or `ms`; answers which came first.
        func wait(_ name: String, _ ms: UInt32) async -> String {
            await withCheckedContinuation { c in
                waiters.withLock { $0[name] = c }
                Task {
                    try? await Task.sleep(for: .milliseconds(Int(ms)))  // the bound of the wait, not a pause
                    self.waiters.withLock { $0.removeValue(forKey: name) }?.resume(returning: "timed out")
                }
            }
        }
    }

    let state = State()
    var applied: [(String, UInt32, UInt32)] { state.applied.withLock { $0 } }
    let object: ExportedObject

    init() throws {
        let state = self.state
        let iface = DBusInterface(Self.interface, methods: [
            DBusMethod("Append", in: [.init("n", .uint32)], ordered: true) { call in
                try await state.append(call)
                call.endTurn()
                for _ in 0..<Int.random(in: 0...3) { await Task.yield() }
                return []
            },
            DBusMethod("AppendLoose", in: [.init("n", .uint32)]) { call in
                try await state.append(call)
                return []
            },
            // Ends its turn before it waits, so that the same sender's Release gets through.
            DBusMethod("WaitFor", in: [.init("name", .string)], out: [.init("outcome", .string)], ordered: true) { call in
                let name = try call.decode(String.self)
                let outcome = Task { await state.wait(name, 20_000) }
                while state.waiters.withLock({ $0[name] == nil }) { await Task.yield() }
                call.endTurn()
                return [.string(await outcome.value)]
            },
            // Holds its turn while it waits.
            DBusMethod("WaitHolding", in: [.init("name", .string), .init("ms", .uint32)], out: [.init("outcome", .string)], ordered: true) { call in
                let (name, ms) = try call.decode(String.self, UInt32.self)
                return [.string(await state.wait(name, ms))]
            },
            DBusMethod("Release", in: [.init("name", .string)], out: [.init("outcome", .string)], ordered: true) { call in
                let name = try call.decode(String.self)
                guard let c = state.waiters.withLock({ $0.removeValue(forKey: name) }) else { return [.string("nobody waiting")] }
                c.resume(returning: "released")
                return [.string("released")]
            },
        ], properties: [DBusProperty("Count", .uint32)])
        object = try ExportedObject(path: Self.path, interfaces: [iface])
        try object.setValue(.uint32(0), of: "Count", in: Self.interface)
        state.object.withLock { $0 = object }
    }

    /// Serves the object on its own connection while `body` runs.
    static func with<T: Sendable>(_ bus: TestBus, maxCallsPerSender: Int = 4_096,
                                  _ body: @escaping @Sendable (OrderService, Connection) async throws -> T) async throws -> T {
        let service = try await bus.connect()
        let order = try OrderService()
        try service.export(order.object)
        #expect(try await service.requestName(name) == .primaryOwner)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await service.serve(maxCallsPerSender: maxCallsPerSender)
                return nil
            }
            group.addTask {
                let r = try await body(order, service)
                try await eventually(timeout: .seconds(10), "no sender left in the turn table") { service.turns.pendingSenders == 0 }
                return r
            }
            defer { group.cancelAll() }
            while let r = try await group.next() {
                if let r { return r }
            }
            throw DBusError(.failed, "unreachable")
        }
    }
}

/// ``Connection/callPipelined(_:timeout:)``, every call answered.
private func pipeline(_ client: Connection, _ messages: [Message]) async throws -> [Message] {
    try await client.callPipelined(messages, timeout: .seconds(300)).map { try $0.get() }
}

private func call(_ method: String, _ args: [DBusValue]) throws -> Message {
    try Message.methodCall(destination: OrderService.name, path: OrderService.path, interface: OrderService.interface, member: method, body: args)
}

@Suite struct CallOrderTests {
    @Test func anOrderedMethodIsAppliedInBusOrderAndAPropertyReadAfterItSeesIt() async throws {
        try await withTestBus { bus in
            try await OrderService.with(bus) { service, _ in
                let client = try await bus.connect()
                // 300 calls, each applied after random suspensions: enough for
                // out-of-order dispatch to show (it did in every run without the
                // turns), few enough to be answered within the test bus's 60 s
                // reply timeout on two loaded cores (1,000 were not, once).
                let count = 300
                var messages = try (0..<count).map { try call("Append", [.uint32(UInt32($0))]) }
                messages.append(try Message.methodCall(destination: OrderService.name, path: OrderService.path,
                                                       interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                       body: [.string(OrderService.interface), .string("Count")]))
                let replies = try await pipeline(client, messages)
                let applied = service.applied
                #expect(applied.count == count)
                let serials = applied.map(\.1)
                // Bus order: every call applied after every call its sender sent before it.
                #expect(serials == serials.sorted())
                #expect(Set(applied.map(\.2)) == Set((0..<UInt32(count))))
                // The Get was answered after every Append sent before it was applied.
                let getSerial = try #require(replies.last?.replySerial)
                let before = serials.filter { $0 < getSerial }.count
                #expect(replies.last?.body == [.variant(.uint32(UInt32(before)))])
                #expect(before == count)
            }
        }
    }

    @Test func aHandlerThatEndsItsTurnLetsTheSameSendersNextCallThroughWhileItWaits() async throws {
        try await withTestBus { bus in
            try await OrderService.with(bus) { _, _ in
                let client = try await bus.connect()
                // Release is dispatched while WaitFor waits: it finds the waiter.
                let released = try await pipeline(client, [try call("WaitFor", [.string("a")]), try call("Release", [.string("a")])])
                #expect(released.map(\.body) == [[.string("released")], [.string("released")]])
                // Without endTurn, Release waits for WaitHolding's answer (its bound).
                let held = try await pipeline(client, [try call("WaitHolding", [.string("b"), .uint32(300)]), try call("Release", [.string("b")])])
                #expect(held.map(\.body) == [[.string("timed out")], [.string("nobody waiting")]])
            }
        }
    }

    @Test func aCallQueuedInsideWhenQueuedRunsItsActionBeforeItIsAnswered() async throws {
        try await withTestBus { bus in
            try await OrderService.with(bus) { _, _ in
                let client = try await bus.connect(), other = try await bus.connect()
                let queued = Mutex(0)
                let waiting = Task {
                    try await CallQueued.whenQueued({ queued.withLock { $0 += 1 } }) {
                        try await client.call(try call("WaitHolding", [.string("q"), .uint32(20_000)]))
                    }
                }
                try await eventually(timeout: .seconds(10), "the action to run while the call waits") { queued.withLock { $0 } == 1 }
                try await eventually(timeout: .seconds(10), "Release to find the waiter") {
                    (try? await other.call(try call("Release", [.string("q")])).body) == [.string("released")]
                }
                #expect(try await waiting.value.body == [.string("released")])
                #expect(queued.withLock { $0 } == 1)
            }
        }
    }

    @Test func aSenderBeyondItsBoundOfCallsInProgressIsRefusedAtOnce() async throws {
        try await withTestBus { bus in
            try await OrderService.with(bus, maxCallsPerSender: 3) { service, server in
                let client = try await bus.connect(), other = try await bus.connect()
                // Three calls in progress: one holds its turn, two wait for theirs.
                let pipelined = Task {
                    try await client.callPipelined([
                        try call("WaitHolding", [.string("l"), .uint32(20_000)]), try call("Append", [.uint32(1)]), try call("Append", [.uint32(2)]),
                    ], timeout: .seconds(60))
                }
                try await eventually(timeout: .seconds(10), "three calls in progress") { server.turns.inProgress(client.uniqueName) == 3 }
                // A fourth is refused at once, while the others still wait.
                do {
                    _ = try await client.call(try call("Append", [.uint32(3)]))
                    Issue.record("a fourth call in progress was taken")
                } catch let error as DBusError {
                    #expect(error.name == .limitsExceeded)
                }
                try await eventually(timeout: .seconds(10), "Release to find the holder") {
                    (try? await other.call(try call("Release", [.string("l")])).body) == [.string("released")]
                }
                let results = try await pipelined.value.map { try $0.get().body }
                #expect(results == [[.string("released")], [], []])
                #expect(service.applied.map(\.2) == [1, 2])
                // Answered calls free their places.
                _ = try await client.call(try call("Append", [.uint32(4)]))
                #expect(service.applied.map(\.2) == [1, 2, 4])
            }
        }
    }

    @Test func anotherSendersCallsDoNotWaitForAHeldTurn() async throws {
        try await withTestBus { bus in
            try await OrderService.with(bus) { _, _ in
                let holder = try await bus.connect(), other = try await bus.connect()
                let waiting = Task { try await holder.call(try call("WaitHolding", [.string("c"), .uint32(20_000)])) }
                // The other sender releases the waiter: it was not held behind the holder's turn.
                var outcome: [DBusValue] = []
                try await eventually(timeout: .seconds(10), "Release from another sender finds the waiter") {
                    outcome = (try? await other.call(try call("Release", [.string("c")])).body) ?? []
                    return outcome == [.string("released")]
                }
                #expect(try await waiting.value.body == [.string("released")])
            }
        }
    }
}
