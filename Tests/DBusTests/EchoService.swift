import Foundation
import Synchronization
import Testing

@testable import DBus

/// A Swift error that carries its D-Bus name.
enum EchoError: DBusErrorConvertible {
    case notPaired
    var dbusError: DBusError { DBusError(.init("org.relink.Test.Error.NotPaired"), "not paired") }
}

struct PlainError: Error {}

/// The echo object used by the tests, exported at `/echo` under the name
/// `org.relink.Test`, with an object manager at `/`.
enum EchoService {
    static let name = "org.relink.Test"
    static let path = ObjectPath(trusted: "/echo")
    static let interface = "org.relink.Test.Echo"

    /// How many Sleep calls each service connection is handling now: tests
    /// wait for a slow call to be under way instead of sleeping.
    static let sleeping = Mutex<[ObjectIdentifier: Int]>([:])

    /// Whether `service` is handling a Sleep call now.
    static func isSleeping(on service: Connection) -> Bool {
        sleeping.withLock { ($0[ObjectIdentifier(service)] ?? 0) > 0 }
    }

    static func object() throws -> ExportedObject {
        let iface = DBusInterface(
            interface,
            methods: [
                DBusMethod("Echo", in: [.init("value", .variant)], out: [.init("value", .variant)]) { call in call.arguments },
                DBusMethod(
                    "EchoMany", in: [.init("a", .dictionary(key: .string, value: .variant)), .init("b", .array(.byte)), .init("c", .structure([.int32, .string]))],
                    out: [.init("a", .dictionary(key: .string, value: .variant)), .init("b", .array(.byte)), .init("c", .structure([.int32, .string]))]
                ) { call in call.arguments },
                DBusMethod("Sleep", in: [.init("ms", .uint32)]) { call in
                    let ms = try call.decode(UInt32.self)
                    let key = ObjectIdentifier(call.connection)
                    sleeping.withLock { $0[key, default: 0] += 1 }
                    defer { sleeping.withLock { $0[key, default: 1] -= 1 } }
                    // A slow method is this fake's whole point (Tests/README.md).
                    try await Task.sleep(for: .milliseconds(Int(ms)))
                    return []
                },
                DBusMethod("WhoAmI", out: [.init("sender", .string), .init("uid", .uint32)]) { call in
                    [.string(call.sender), .uint32(try await call.callerUnixUser())]
                },
                DBusMethod("Fail", in: [.init("name", .string), .init("message", .string)]) { call in
                    let (name, message) = try call.decode(String.self, String.self)
                    throw DBusError(.init(name), message)
                },
                DBusMethod("BadReply", out: [.init("x", .string)]) { _ in [.uint32(1)] },
                DBusMethod("FailTyped") { _ in throw EchoError.notPaired },
                DBusMethod("FailPlain") { _ in throw PlainError() },
                DBusMethod("Emit", in: [.init("count", .uint32)]) { call in
                    // Not used for the burst (that goes straight from a client); kept for signal tests.
                    let n = try call.decode(UInt32.self)
                    for i in 0..<n {
                        try call.connection.emitSignal(path: path, interface: interface, member: "Tick", arguments: [.uint32(i)])
                    }
                    return []
                },
            ],
            properties: [
                DBusProperty("Name", .string, access: .readwrite),
                DBusProperty("Count", .uint32),
                DBusProperty("Secret", .string, access: .write),
                DBusProperty("Limited", .int32, access: .readwrite) { value, _ in
                    if case .int32(let v) = value, v < 0 { throw DBusError(.invalidArgs, "negative") }
                },
            ],
            signals: [DBusSignal("Tick", [.init("n", .uint32)])])
        return try ExportedObject(
            path: path, interfaces: [iface], values: [interface: ["Name": .string("echo"), "Count": .uint32(7)]])
    }

    /// Starts the echo service on its own connection, runs `body` with the
    /// service connection and a client connection, and stops serving.
    static func with<T: Sendable>(
        _ bus: TestBus, _ body: @escaping @Sendable (_ service: Connection, _ object: ExportedObject, _ client: Connection) async throws -> T
    ) async throws -> T {
        let service = try await bus.connect()
        let object = try object()
        service.addObjectManager(at: .root)
        try service.export(object)
        #expect(try await service.requestName(name) == .primaryOwner)
        let client = try await bus.connect()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await service.serve()
                return nil
            }
            group.addTask { try await body(service, object, client) }
            defer { group.cancelAll() }
            while let r = try await group.next() {
                if let r { return r }
            }
            throw DBusError(.failed, "unreachable")
        }
    }

    static func echo(_ client: Connection, _ value: DBusValue, timeout: Duration = .seconds(10)) async throws -> DBusValue {
        let reply = try await client.call(
            destination: name, path: path, interface: interface, method: "Echo", arguments: [.variant(value)], timeout: timeout)
        #expect(reply.body.count == 1)
        guard case .variant(let v) = reply.body.first else { throw DBusError(.failed, "reply is not a variant") }
        return v
    }
}
