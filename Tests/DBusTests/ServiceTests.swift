import Foundation
import Synchronization
import Testing

@testable import DBus
import RelinkModel

@Suite struct ServiceTests {
    static let props = "org.freedesktop.DBus.Properties"

    func call(_ c: Connection, _ iface: String, _ method: String, _ args: [DBusValue] = [], path: ObjectPath = EchoService.path) async throws -> Message {
        try await c.call(destination: EchoService.name, path: path, interface: iface, method: method, arguments: args)
    }

    @Test func propertiesGetGetAllSetAndPropertiesChanged() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, object, client in
                let i = EchoService.interface
                let changes = try await client.signals(
                    matching: SignalMatch(sender: EchoService.name, interface: Self.props, member: "PropertiesChanged", path: EchoService.path))
                var it = changes.makeAsyncIterator()

                #expect(try await call(client, Self.props, "Get", [.string(i), .string("Name")]).body == [.variant(.string("echo"))])
                let all = try await call(client, Self.props, "GetAll", [.string(i)]).decode([String: DBusValue].self)
                #expect(all == ["Name": .string("echo"), "Count": .uint32(7)])

                _ = try await call(client, Self.props, "Set", [.string(i), .string("Name"), .variant(.string("renamed"))])
                #expect(object.value(of: "Name", in: i) == .string("renamed"))
                let changed = try await it.next()
                let (iface, values, invalidated) = try #require(changed).decode(String.self, [String: DBusValue].self, [String].self)
                #expect(iface == i && values == ["Name": .string("renamed")] && invalidated.isEmpty)

                // Local changes are announced too; unsetting invalidates.
                try object.setValues(["Count": .uint32(8), "Name": nil], in: i)
                let local = try #require(try await it.next()).decode(String.self, [String: DBusValue].self, [String].self)
                #expect(local.1 == ["Count": .uint32(8)] && local.2 == ["Name"])
                #expect(throws: DBusError.self) { try object.setValue(.string("x"), of: "Count", in: i) }

                func expectError(_ name: DBusError.Name, _ args: [DBusValue], _ method: String = "Set") async {
                    do {
                        _ = try await call(client, Self.props, method, args)
                        Issue.record("no error for \(args)")
                    } catch let e as DBusError {
                        #expect(e.name == name, "\(args)")
                    } catch {
                        Issue.record("\(error)")
                    }
                }
                await expectError(.propertyReadOnly, [.string(i), .string("Count"), .variant(.uint32(1))])
                await expectError(.invalidArgs, [.string(i), .string("Name"), .variant(.uint32(1))])
                await expectError(.unknownProperty, [.string(i), .string("Nope"), .variant(.uint32(1))])
                await expectError(.unknownInterface, [.string("org.relink.None"), .string("Name"), .variant(.uint32(1))])
                await expectError(.invalidArgs, [.string(i), .string("Limited"), .variant(.int32(-1))])
                await expectError(.invalidArgs, [.string(i), .string("Name")])
                await expectError(.accessDenied, [.string(i), .string("Secret")], "Get")
                await expectError(.invalidArgs, [.string(i), .string("Name")], "Get")  // unset now
                _ = try await call(client, Self.props, "Set", [.string(i), .string("Limited"), .variant(.int32(5))])
                #expect(object.value(of: "Limited", in: i) == .int32(5))
            }
        }
    }

    @Test func objectManagerListsAndAnnouncesObjects() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { service, _, client in
                let reply = try await call(client, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", path: .root)
                let managed = try reply.decode([ObjectPath: [String: [String: DBusValue]]].self)
                #expect(managed == [EchoService.path: [EchoService.interface: ["Name": .string("echo"), "Count": .uint32(7)]]])

                let added = try await client.signals(matching: SignalMatch(sender: EchoService.name, interface: "org.freedesktop.DBus.ObjectManager"))
                var it = added.makeAsyncIterator()
                let devicePath = try ObjectPath("/org/relink/dev_1")
                let device = try ExportedObject(
                    path: devicePath, interfaces: [DBusInterface("org.relink.Test.Device1", properties: [DBusProperty("Alias", .string)])],
                    values: ["org.relink.Test.Device1": ["Alias": .string("thing")]])
                try service.export(device)
                let a = try #require(try await it.next())
                #expect(a.member == "InterfacesAdded")
                let (p, ifaces) = try a.decode(ObjectPath.self, [String: [String: DBusValue]].self)
                #expect(p == devicePath && ifaces == ["org.relink.Test.Device1": ["Alias": .string("thing")]])
                #expect(throws: DBusError.self) { try service.export(device) }
                try service.unexport(devicePath)
                let r = try #require(try await it.next())
                #expect(r.member == "InterfacesRemoved")
                #expect(try r.decode(ObjectPath.self, [String].self) == (devicePath, ["org.relink.Test.Device1"]))
            }
        }
    }

    @Test func handlersRunConcurrentlyAndKnowTheirCaller() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { service, _, client in
                // A quick call is answered while a slow one is still being
                // handled (checked by order, not by a wall-clock bound).
                let slowDone = Mutex(false)
                let slow = Task {
                    _ = try await call(client, EchoService.interface, "Sleep", [.uint32(10_000)])
                    slowDone.withLock { $0 = true }
                }
                try await eventually(timeout: .seconds(20), "the slow call under way") { EchoService.isSleeping(on: service) }
                #expect(try await EchoService.echo(client, .string("quick")) == .string("quick"))
                #expect(!slowDone.withLock { $0 }, "the quick call waited for the slow one")
                slow.cancel()
                _ = await slow.result
                let (sender, uid) = try await call(client, EchoService.interface, "WhoAmI").decode(String.self, UInt32.self)
                #expect(sender == client.uniqueName)
                #expect(uid == getuid())
            }
        }
    }

    @Test func handlersCanRunOnTheIOThread() async throws {
        try await withTestBus { bus in
            let service = try await bus.connect()
            try service.export(EchoService.object())
            let client = try await bus.connect()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.serve(handlersOnIOThread: true) }
                let reply = try await client.call(
                    destination: service.uniqueName, path: EchoService.path, interface: EchoService.interface, method: "WhoAmI")
                #expect(try reply.decode(String.self, UInt32.self).0 == client.uniqueName)
                // A second serve() on the same connection is refused.
                await #expect(throws: DBusError.self) { try await service.serve() }
                group.cancelAll()
            }
        }
    }

    @Test func malformedCallsFromOtherToolsGetErrorsAndDoNotCrash() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, client in
                let dest = "--dest=\(EchoService.name)"
                let wrongType = try await bus.run(
                    "/usr/bin/dbus-send", ["--bus=\(bus.address)", "--print-reply", dest, "/echo", "org.relink.Test.Echo.Echo", "string:hi"])
                #expect(wrongType.status != 0)
                #expect(wrongType.output.contains("org.freedesktop.DBus.Error.InvalidArgs"))
                let tooMany = try await bus.run(
                    "/usr/bin/busctl", ["--address=\(bus.address)", "call", EchoService.name, "/echo", "org.relink.Test.Echo", "Sleep", "uu", "1", "2"])
                #expect(tooMany.status != 0)
                #expect(tooMany.output.contains("takes 'u'"))
                let badGet = try await bus.run(
                    "/usr/bin/busctl", ["--address=\(bus.address)", "call", EchoService.name, "/echo", Self.props, "Get", "i", "5"])
                #expect(badGet.status != 0)
                let ok = try await bus.run(
                    "/usr/bin/busctl", ["--address=\(bus.address)", "call", EchoService.name, "/echo", "org.relink.Test.Echo", "Echo", "v", "a{sv}", "1", "k", "u", "9"])
                #expect(ok.status == 0)
                #expect(ok.output.contains("a{sv} 1 \"k\" u 9"))
                // Raw libdbus peer with mismatched arguments on every standard interface.
                for (iface, method) in [(Self.props, "GetAll"), ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects"), ("org.freedesktop.DBus.Introspectable", "Nope"),
                                        ("org.freedesktop.DBus.Introspectable", "Introspect"), ("org.freedesktop.DBus.Peer", "Ping")] {
                    let error = await #expect(throws: DBusError.self) {
                        try await client.call(destination: EchoService.name, path: .root, interface: iface, method: method, arguments: [.int64(1), .boolean(true)])
                    }
                    if ["Introspect", "Ping"].contains(method) { #expect(error?.name == .invalidArgs, "\(method)") }
                }
                #expect(try await EchoService.echo(client, .string("alive")) == .string("alive"))
            }
        }
    }

    @Test func introspectionIsReadableByBusctlAndGdbus() async throws {
        try await withTestBus { bus in
            try await EchoService.with(bus) { _, _, _ in
                let tree = try await bus.run("/usr/bin/busctl", ["--address=\(bus.address)", "tree", "--list", EchoService.name])
                #expect(tree.status == 0)
                #expect(tree.output.contains("/echo"))
                let busctl = try await bus.run("/usr/bin/busctl", ["--address=\(bus.address)", "introspect", EchoService.name, "/echo"])
                #expect(busctl.status == 0, "\(busctl.output)")
                for needle in ["org.relink.Test.Echo", ".Echo", "method", "v", ".Name", "property", "\"echo\"", "writable", ".Tick", "signal", "org.freedesktop.DBus.Properties"] {
                    #expect(busctl.output.contains(needle), "busctl output lacks \(needle)")
                }
                let gdbus = try await bus.run(
                    "/usr/bin/gdbus", ["introspect", "--address", bus.address, "--dest", EchoService.name, "--object-path", "/", "--recurse"])
                #expect(gdbus.status == 0, "\(gdbus.output)")
                for needle in ["node /echo", "interface org.relink.Test.Echo", "Echo(in  v value,", "readwrite s Name = 'echo';", "signals:", "Tick(u n);", "interface org.freedesktop.DBus.ObjectManager"] {
                    #expect(gdbus.output.contains(needle), "gdbus output lacks \(needle)")
                }
            }
        }
    }
}
