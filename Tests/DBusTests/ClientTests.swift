import Foundation
import Testing

@testable import DBus
import RelinkModel

@Suite struct ClientTests {
    @Test func connectionFailuresAreTypedErrors() async throws {
        await #expect(throws: DBusError.self) {
            try await Connection.connect(to: .address("unix:path=/nonexistent/relink-test-bus"))
        }
        await #expect(throws: DBusError.self) { try await Connection.connect(to: .address("bogus")) }
    }

    @Test func systemBusAddressIsTakenFromTheEnvironment() async throws {
        // The environment is a dictionary here: setenv while other tests'
        // threads start processes (and so copy environ) crashed the test
        // process in CI.
        try await withTestBus { bus in
            let env = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]
            let address = try Connection.Bus.system.address(environment: { env[$0] })
            #expect(address == bus.address)
            let c = try await Connection.connect(to: .address(address))
            #expect(c.uniqueName.hasPrefix(":"))
            #expect(try await c.nameOwner(of: "org.freedesktop.DBus") == "org.freedesktop.DBus")
        }
        #expect(try Connection.Bus.system.address(environment: { _ in nil }) == "unix:path=/run/dbus/system_bus_socket")
        #expect(throws: DBusError(.badAddress, "DBUS_SESSION_BUS_ADDRESS is not set")) {
            try Connection.Bus.session.address(environment: { _ in nil })
        }
        #expect(try Connection.Bus.session.address(environment: { $0 == "DBUS_SESSION_BUS_ADDRESS" ? "unix:path=/x" : nil }) == "unix:path=/x")
        #expect(throws: DBusError(.badAddress, "empty or invalid bus address")) {
            try Connection.Bus.address("").address(environment: { _ in nil })
        }
    }

    @Test func errorsRepliedByPeersCarryNameAndMessage() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, client in
                let call = { (method: String, args: [DBusValue]) async throws -> Message in
                    try await client.call(
                        destination: EchoService.name, path: EchoService.path, interface: EchoService.interface, method: method, arguments: args)
                }
                do {
                    _ = try await call("Fail", [.string("org.relink.Error.NotFound"), .string("nope")])
                    Issue.record("no error")
                } catch let e as DBusError {
                    #expect(e.name.rawValue == "org.relink.Error.NotFound")
                    #expect(e.message == "nope")
                }
                await #expect(throws: DBusError(.unknownMethod, "no method Nope at /echo")) { try await call("Nope", []) }
                await #expect(throws: DBusError(.invalidArgs, "Echo takes 'v', got 's'")) { try await call("Echo", [.string("x")]) }
                await #expect(throws: DBusError(.failed, "BadReply returned 'u', declared 's'")) { try await call("BadReply", []) }
                await #expect(throws: DBusError(.init("org.relink.Test.Error.NotPaired"), "not paired")) { try await call("FailTyped", []) }
                await #expect(throws: DBusError(.failed, "PlainError()")) { try await call("FailPlain", []) }
                do {
                    _ = try await client.call(destination: EchoService.name, path: ObjectPath("/nothing"), interface: EchoService.interface, method: "Echo")
                    Issue.record("no error")
                } catch let e as DBusError {
                    #expect(e.name == .unknownObject)
                }
                do {
                    _ = try await client.call(destination: EchoService.name, path: EchoService.path, interface: "org.relink.Nothing", method: "Echo")
                    Issue.record("no error")
                } catch let e as DBusError {
                    #expect(e.name == .unknownInterface)
                }
            }
        }
    }

    @Test func callsToVanishedPeersFailWithTheRightError() async throws {
        try await withTestBus { bus in
            let client = try await bus.connect()
            // A well-known name nobody owns.
            do {
                _ = try await client.call(destination: "org.relink.Nobody", path: .root, interface: nil, method: "X")
                Issue.record("no error")
            } catch let e as DBusError {
                #expect(e.name == .serviceUnknown)
            }
            // A peer that was there and left.
            let peer = try await bus.connect()
            let gone = peer.uniqueName
            peer.close()
            try await eventually(timeout: .seconds(10), "\(gone) to leave the bus") {
                (try? await client.nameOwner(of: gone)).flatMap { $0 } == nil
            }
            do {
                _ = try await client.call(destination: gone, path: .root, interface: nil, method: "X")
                Issue.record("no error")
            } catch let e as DBusError {
                #expect(e.name == .serviceUnknown)
            }
            // A peer that leaves while our call is in flight: the bus answers NoReply.
            let service = try await bus.connect()
            let object = try EchoService.object()
            try service.export(object)
            let serving = Task { try await service.serve() }
            async let reply = client.call(
                destination: service.uniqueName, path: EchoService.path, interface: EchoService.interface, method: "Sleep",
                arguments: [.uint32(10_000)])
            try await eventually(timeout: .seconds(20), "the slow call under way at the service") { EchoService.isSleeping(on: service) }
            service.close()
            do {
                _ = try await reply
                Issue.record("no error")
            } catch let e as DBusError {
                #expect(e.name == .noReply)
            }
            serving.cancel()
        }
    }

    @Test func timeoutsFailWithNoReplyAndLeaveNothingPending() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, client in
                let start = ContinuousClock.now
                do {
                    _ = try await client.call(
                        destination: EchoService.name, path: EchoService.path, interface: EchoService.interface, method: "Sleep",
                        arguments: [.uint32(5_000)], timeout: .milliseconds(200))
                    Issue.record("no timeout")
                } catch let e as DBusError {
                    #expect(e.name == .noReply)
                }
                // Not before its timeout. (That it fired well before the 5 s
                // reply is shown by the NoReply error itself: no wall-clock
                // upper bound, which a loaded machine would break.)
                #expect(ContinuousClock.now - start >= .milliseconds(190))
                #expect(client.loop.state.withLock { $0.pending.isEmpty })
                // The connection still works.
                #expect(try await EchoService.echo(client, .int32(1)) == .int32(1))
            }
        }
    }

    @Test func cancellationRemovesThePendingCall() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, client in
                let task = Task {
                    try await client.call(
                        destination: EchoService.name, path: EchoService.path, interface: EchoService.interface, method: "Sleep",
                        arguments: [.uint32(10_000)])
                }
                // Wait until the call is on the wire (a loaded machine may
                // take a while to start the task).
                try await eventually(timeout: .seconds(20), "the call on the wire") {
                    client.loop.state.withLock { $0.pending.count } > 0
                }
                #expect(client.loop.state.withLock { $0.pending.count } == 1)
                task.cancel()
                // CancellationError, not the reply the 10 s handler would send at last.
                await #expect(throws: CancellationError.self) { try await task.value }
                #expect(client.loop.state.withLock { $0.pending.isEmpty && $0.serialByToken.isEmpty })
                // Cancelled before it starts.
                let early = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await EchoService.echo(client, .int32(1))
                }
                await #expect(throws: CancellationError.self) { try await early.value }
                #expect(try await EchoService.echo(client, .int32(2)) == .int32(2))
            }
        }
    }

    @Test func closingFailsPendingCallsWithDisconnected() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, client in
                async let reply = client.call(
                    destination: EchoService.name, path: EchoService.path, interface: EchoService.interface, method: "Sleep",
                    arguments: [.uint32(10_000)])
                let signals = try await client.signals(matching: SignalMatch(interface: EchoService.interface))
                try await eventually(timeout: .seconds(20), "the call pending") { client.loop.state.withLock { $0.pending.count } > 0 }
                client.close()
                do {
                    _ = try await reply
                    Issue.record("no error")
                } catch let e as DBusError {
                    #expect(e.name == .disconnected)
                }
                do {
                    for try await _ in signals {}
                    Issue.record("stream ended without error")
                } catch let e as DBusError {
                    #expect(e.name == .disconnected)
                }
                await #expect(throws: DBusError.self) { try await EchoService.echo(client, .int32(1)) }
            }
        }
    }

    @Test func busDeathFailsPendingCalls() async throws {
        let bus = try await TestBus()
        defer { bus.stop() }
        let client = try await bus.connect()
        let other = try await bus.connect()
        async let reply = client.call(destination: other.uniqueName, path: .root, interface: nil, method: "NeverAnswered")
        try await eventually(timeout: .seconds(20), "the call pending") { client.loop.state.withLock { $0.pending.count } > 0 }
        kill(bus.daemonPID, SIGKILL)
        do {
            _ = try await reply
            Issue.record("no error")
        } catch let e as DBusError {
            #expect(e.name == .disconnected)
        }
    }

    @Test func tasksPreferringTheConnectionExecutorRunOnItsIOThread() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, client in
                let (value, onLoop) = try await withTaskExecutorPreference(client.executor) {
                    let v = try await EchoService.echo(client, .int32(5))
                    let t = client.loop.state.withLock { $0.loopThread }
                    return (v, t.map { pthread_equal($0, pthread_self()) != 0 } ?? false)
                }
                #expect(value == .int32(5))
                #expect(onLoop)
                client.close()
                try await eventually(timeout: .seconds(10), "the loop to end") { client.loop.state.withLock { $0.loopThread == nil } }
                // After the loop ended, such tasks continue elsewhere instead of hanging.
                let after = await withTaskExecutorPreference(client.executor) {
                    await Task.yield()
                    return 42
                }
                #expect(after == 42)
            }
        }
    }
}
