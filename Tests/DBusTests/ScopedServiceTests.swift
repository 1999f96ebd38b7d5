import BenchSupport
import Foundation
import Synchronization
import Testing

@testable import DBus
import RelinkModel

/// What services with per-caller objects need (relinkd's client API):
/// messages sent after a reply, unicast signals and PropertiesChanged,
/// computed properties, and a per-caller object filter.
@Suite struct ScopedServiceTests {
    static let name = "org.relink.TestScoped"
    static let iface = "org.relink.Test.Scoped"
    static let shown = ObjectPath(trusted: "/objects/shown")
    static let hidden = ObjectPath(trusted: "/objects/hidden")

    final class Received: Sendable {
        let messages = Mutex<[Message]>([])
        let task = Mutex<Task<Void, Never>?>(nil)
        init(_ stream: SignalStream) {
            let t = Task { [weak self] in
                do { for try await m in stream { self?.messages.withLock { $0.append(m) } } } catch {}
            }
            task.withLock { $0 = t }
        }
        var all: [Message] { messages.withLock { $0 } }
        deinit { task.withLock { $0?.cancel() } }
    }

    static func interface() -> DBusInterface {
        DBusInterface(iface, methods: [
            DBusMethod("Hello", out: [.init("greeting", .string)]) { call in
                call.afterReply {
                    try? call.connection.emitSignal(path: shown, interface: iface, member: "Hi", arguments: [.string("after")], destination: call.sender)
                }
                return [.string("hello")]
            },
        ], properties: [
            DBusProperty("Caller", .string, emitsChanged: false, getter: { call in .string(call.sender) }),
            DBusProperty("Count", .uint32),
        ], signals: [DBusSignal("Hi", [.init("text", .string)])], invalidSignatureError: .init("org.relink.Test.Error.BadArguments"))
    }

    @Test func afterReplyUnicastComputedPropertiesAndFilter() async throws {
        try await withTestBus { bus in
            let service = try await bus.connect()
            let visible = try ExportedObject(path: Self.shown, interfaces: [Self.interface()], values: [Self.iface: ["Count": .uint32(1)]])
            let secret = try ExportedObject(path: Self.hidden, interfaces: [Self.interface()], values: [Self.iface: ["Count": .uint32(2)]])
            service.addObjectManager(at: .root)
            try service.export(visible)
            try service.export(secret, announceTo: [])
            #expect(try await service.requestName(Self.name) == .primaryOwner)
            let client = try await bus.connect()
            let outsider = try await bus.connect()
            // The outsider may not see /objects/hidden.
            let outsiderName = outsider.uniqueName
            service.setObjectFilter { path, sender in !(path == Self.hidden && sender == outsiderName) }
            let serving = Task { try await service.serve() }
            defer { serving.cancel() }

            let mine = Received(try await client.signals(matching: SignalMatch(sender: Self.name)))
            let broad = Received(try await outsider.signals(matching: SignalMatch()))

            // A message sent after the reply reaches the caller after it.
            let reply = try await client.call(destination: Self.name, path: Self.shown, interface: Self.iface, method: "Hello")
            try await eventually(timeout: .seconds(10), "Hi at the client") { mine.all.contains { $0.member == "Hi" } }
            let hi = try #require(mine.all.first { $0.member == "Hi" })
            #expect(hi.serial > reply.serial)
            #expect(hi.destination == client.uniqueName)

            // A call with the wrong signature gets the interface's own error name.
            do {
                _ = try await client.call(destination: Self.name, path: Self.shown, interface: Self.iface, method: "Hello", arguments: [.uint32(1)])
                Issue.record("a wrong signature was accepted")
            } catch let e as DBusError {
                #expect(e.name.rawValue == "org.relink.Test.Error.BadArguments")
            }

            // Unicast PropertiesChanged.
            try visible.setValues(["Count": .uint32(5)], in: Self.iface, destinations: [client.uniqueName])
            try await eventually(timeout: .seconds(10), "PropertiesChanged at the client") { mine.all.contains { $0.member == "PropertiesChanged" } }

            // A computed property answers per caller.
            let caller = try await client.call(destination: Self.name, path: Self.shown, interface: "org.freedesktop.DBus.Properties",
                                               method: "Get", arguments: [.string(Self.iface), .string("Caller")])
            #expect(caller.body == [.variant(.string(client.uniqueName))])
            let all = try await client.call(destination: Self.name, path: Self.shown, interface: "org.freedesktop.DBus.Properties",
                                            method: "GetAll", arguments: [.string(Self.iface)]).decode([String: DBusValue].self)
            #expect(all == ["Caller": .string(client.uniqueName), "Count": .uint32(5)])

            // The filter: the outsider cannot see the hidden object; the client can.
            do {
                _ = try await outsider.call(destination: Self.name, path: Self.hidden, interface: "org.freedesktop.DBus.Properties",
                                            method: "GetAll", arguments: [.string(Self.iface)])
                Issue.record("the hidden object answered")
            } catch let e as DBusError {
                #expect(e.name == .unknownObject)
            }
            let theirs = try await outsider.call(destination: Self.name, path: .root, interface: "org.freedesktop.DBus.ObjectManager",
                                                 method: "GetManagedObjects").decode([ObjectPath: [String: [String: DBusValue]]].self)
            #expect(Set(theirs.keys) == [Self.shown])
            let ours = try await client.call(destination: Self.name, path: .root, interface: "org.freedesktop.DBus.ObjectManager",
                                             method: "GetManagedObjects").decode([ObjectPath: [String: [String: DBusValue]]].self)
            #expect(Set(ours.keys) == [Self.shown, Self.hidden])
            let xml = try await outsider.call(destination: Self.name, path: ObjectPath(trusted: "/objects"),
                                              interface: "org.freedesktop.DBus.Introspectable", method: "Introspect").decode(String.self)
            #expect(xml.contains("\"shown\"") && !xml.contains("\"hidden\""))

            // None of the unicast messages reached the outsider's broad rule.
            try await observeQuietly(for: .milliseconds(200), "no unicast message at the outsider's broad rule")
            #expect(!broad.all.contains { $0.member == "Hi" || $0.member == "PropertiesChanged" || ($0.member == "InterfacesAdded" && $0.body.first == .objectPath(Self.hidden)) })
            client.close()
            outsider.close()
            service.close()
        }
    }

}
