import BenchSupport
import Foundation
import DBus
import RelinkAPI
import RelinkModel
import Testing

/// The real relinkd, run as its own user `relink`, on a dbus-daemon
/// configured as Debian's system bus (the rules of
/// `/usr/share/dbus-1/system.conf`, copied as they are, with the shipped
/// `systemd/org.relink.conf` in place of `system.d/`), called as root, as
/// `relink`, and as the ordinary users `relink-e2e` and `nobody` (issue 39
/// item 1): every method of every interface relinkd serves must be answered
/// by relinkd (allowed, or refused by relinkd itself as
/// docs/api/access.md says), never refused by the bus; only
/// `Control1` is the bus's to refuse, to all but root and `relink`.
///
/// The methods come from relinkd's own introspection, read as root, and are
/// checked against the contract's member lists, so a new method or
/// interface is called here without a change to this test. Calls go
/// through `gdbus` run under each user with `setpriv`, as gdbus prints the
/// D-Bus error name of a refusal.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SystemBusAccessTests {
    static let systemConf = "/usr/share/dbus-1/system.conf"
    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
    static var canRun: Bool {
        getuid() == 0 && FileManager.default.isReadableFile(atPath: systemConf)
            && ["/usr/bin/setpriv", "/usr/bin/gdbus", "/usr/bin/dbus-daemon"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && uid(of: "relink") != nil && uid(of: "relink-e2e") != nil && uid(of: "nobody") != nil
    }

    static func uid(of user: String) -> UInt32? {
        getpwnam(user).map { $0.pointee.pw_uid }
    }

    /// Debian's system bus configuration with only what makes it a bus of
    /// this test changed: its socket, no fork, pid file, syslog, user switch,
    /// activation helper or service directories, and in place of the
    /// machine's policy directories, the shipped policy (and `dropIns`).
    static func busConfig(socket: String, dropIns: [String]) throws -> String {
        var text = try String(contentsOfFile: systemConf, encoding: .utf8)
        let removed = [#"<user>[^<]*</user>"#, #"<fork/>"#, #"<pidfile>[^<]*</pidfile>"#, #"<syslog/>"#,
                       #"<servicehelper>[^<]*</servicehelper>"#, #"<standard_system_servicedirs/>"#,
                       #"<include [^>]*>[^<]*</include>"#, #"<includedir>/etc/dbus-1/system.d</includedir>"#]
        for pattern in removed {
            text = text.replacingOccurrences(of: pattern, with: "", options: .regularExpression)
        }
        text = text.replacingOccurrences(of: #"<listen>[^<]*</listen>"#, with: "<listen>unix:path=\(socket)</listen>", options: .regularExpression)
        let policies = ([repository.appendingPathComponent("systemd/org.relink.conf").path] + dropIns).map { "<include>\($0)</include>" }
        text = text.replacingOccurrences(of: "<includedir>system.d</includedir>", with: policies.joined(separator: "\n"))
        return text
    }

    /// One method to call: where, which, and its input signature.
    struct Method: Hashable, CustomStringConvertible {
        var path: String
        var interface: String
        var name: String
        var inputs: [String]
        var description: String { "\(interface).\(name) on \(path)" }
    }

    /// A reply: nil for success, else the D-Bus error name (or gdbus's own
    /// failure text, such as a timeout).
    struct Reply {
        var error: String?
        var text: String
    }

    /// A running bus with relinkd on it, as relink.
    final class System: @unchecked Sendable {  // used from one test task only
        let directory: String
        let socket: String
        let bus: Process
        let relinkd: Process

        init(dropIns: [String] = []) async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("relink-sysbus-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            let socket = directory + "/system_bus_socket"
            self.socket = socket
            try SystemBusAccessTests.busConfig(socket: socket, dropIns: dropIns).write(toFile: directory + "/system.conf", atomically: true, encoding: .utf8)
            bus = Process()
            bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
            bus.arguments = ["--config-file=\(directory)/system.conf", "--nofork", "--nopidfile"]
            try bus.run()
            try await eventually(timeout: .seconds(10), "the bus socket") { FileManager.default.fileExists(atPath: socket) }

            // relinkd as relink, from a copy any user may read (a checkout may not be), with its store owned by relink.
            guard let relink = SystemBusAccessTests.uid(of: "relink"), let group = getpwnam("relink")?.pointee.pw_gid else {
                throw BenchError.startFailed("no relink user")
            }
            let binary = directory + "/relinkd"
            try FileManager.default.copyItem(atPath: RelinkdProcess.executable.path, toPath: binary)
            let state = directory + "/state"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            _ = chown(state, relink, group)
            relinkd = Process()
            relinkd.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            relinkd.arguments = ["--reuid=\(relink)", "--regid=\(group)", "--clear-groups", "--", binary,
                                 "--bus-address", "unix:path=\(socket)", "--state-directory", state,
                                 "--log-destination", "stderr", "--log-level", "debug"]
            var environment = ProcessInfo.processInfo.environment
            for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "STATE_DIRECTORY", "JOURNAL_STREAM"] { environment[name] = nil }
            environment["RELINK_CONTROL_INTERFACE"] = "1"  // so that Control1 exists, to check who reaches it
            relinkd.environment = environment
            _ = FileManager.default.createFile(atPath: directory + "/relinkd.log", contents: nil)
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/relinkd.log"))
            relinkd.standardError = log
            relinkd.standardOutput = log
            try relinkd.run()
        }

        var log: String { (try? String(contentsOfFile: directory + "/relinkd.log", encoding: .utf8)) ?? "" }

        /// Waits (30 s at most) until root's `method` call is answered; on
        /// time-out the error carries root's last reply, whether relinkd
        /// still runs and its log, so that a failure says why.
        func waitForRelinkd(_ method: Method) async throws {
            var last = Reply(error: "no call made", text: "")
            do {
                try await eventually(timeout: .seconds(30), "relinkd on the bus") {
                    last = (try? await call(method, as: 0, first: "")) ?? Reply(error: "gdbus did not run", text: "")
                    return last.error == nil
                }
            } catch {
                let state = relinkd.isRunning ? "running" : "exited \(relinkd.terminationStatus)"
                throw BenchError.startFailed("relinkd not answering on the bus within 30 s (relinkd \(state); root's last reply: "
                                             + "\(last.error ?? "none") \(last.text.suffix(400))); relinkd's log:\n\(log.suffix(3000))")
            }
        }

        func stop() {
            for p in [relinkd, bus] where p.isRunning {
                kill(p.processIdentifier, SIGKILL)
                p.waitUntilExit()
            }
            try? FileManager.default.removeItem(atPath: directory)
        }

        /// Calls `method` as `uid` with gdbus, its arguments made from the
        /// signature; `first` is the first string argument (an identifier).
        func call(_ method: Method, as uid: UInt32, first: String) async throws -> Reply {
            let values = method.inputs.enumerated().map { index, type in
                "@\(type) " + (index == 0 && type == "s" ? "'\(first)'" : GVariantText.value(of: type))
            }
            var arguments = ["call", "--address", "unix:path=\(socket)", "--dest", RelinkNames.busName,
                             "--object-path", method.path, "--method", "\(method.interface).\(method.name)", "--timeout", "20"]
            if !values.isEmpty { arguments += ["--"] + values }
            let (status, output) = try await runTool("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid == 0 ? 0 : (getpwuid(uid)?.pointee.pw_gid ?? 65534))",
                                                                      "--clear-groups", "--", "/usr/bin/gdbus"] + arguments)
            guard status != 0 else { return Reply(error: nil, text: output) }
            // "Error: GDBus.Error:org.relink.Error.UnknownIdentifier: message"
            if let range = output.range(of: #"GDBus\.Error:[A-Za-z0-9_.]+"#, options: .regularExpression) {
                return Reply(error: String(output[range].dropFirst("GDBus.Error:".count)), text: output)
            }
            return Reply(error: "gdbus: " + output, text: output)
        }

        /// The methods `path` has, as relinkd introspects it for root.
        func methods(on path: String) async throws -> [Method] {
            let reply = try await call(Method(path: path, interface: "org.freedesktop.DBus.Introspectable", name: "Introspect", inputs: []),
                                       as: 0, first: "")
            #expect(reply.error == nil, "introspect \(path): \(reply.text)")
            return Introspection.methods(in: reply.text, path: path)
        }
    }

    @Test(.enabled(if: canRun, "needs root, setpriv, gdbus, Debian's system.conf and the users relink, relink-e2e, nobody (scripts/setup.sh)"))
    func everyMethodIsAnsweredByRelinkdForEveryUser() async throws {
        let system = try await System()
        defer { system.stop() }
        let manager = "/org/relink"
        let managerMethods = Method(path: manager, interface: RelinkNames.manager, name: Manager1Member.listIdentifiers.rawValue, inputs: [])
        try await system.waitForRelinkd(managerMethods)

        // root's identifier, with a connection intent (a Peripheral1 object) to introspect.
        let rootID = "access-root"
        let register = Method(path: manager, interface: RelinkNames.manager, name: Manager1Member.register.rawValue, inputs: ["s", "a{sv}"])
        var reply = try await system.call(register, as: 0, first: rootID)
        #expect(reply.error == nil, "\(reply.text)")
        let rootCentral = APIPath.central(try #require(try? RestoreIdentifier(rootID))).rawValue
        let connect = Method(path: rootCentral, interface: RelinkNames.central, name: Central1Member.connect.rawValue, inputs: ["s", "a{sv}"])
        reply = try await system.call(connect, as: 0, first: "00:11:22:33:44:55")
        #expect(reply.error == nil, "\(reply.text)")
        let peripheral = try #require(reply.text.range(of: #"/org/relink/peripheral/[A-Za-z0-9_]+"#, options: .regularExpression)
            .map { String(reply.text[$0]) }, "\(reply.text)")

        // Every method relinkd's objects introspect, checked against the contract.
        var methods: [Method] = []
        for path in [manager, rootCentral, peripheral, "/org/relink/control"] { methods += try await system.methods(on: path) }
        let interfaces = Set(methods.map(\.interface))
        for name in [RelinkNames.manager, RelinkNames.central, RelinkNames.peripheralManager, RelinkNames.control,
                     "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable"] {
            #expect(interfaces.contains(name), "\(name) is not introspected: \(interfaces.sorted())")
        }
        let contract: [String: Set<String>] = [
            RelinkNames.manager: Set(Manager1Member.allCases.map(\.rawValue)),
            RelinkNames.central: Set(Central1Member.allCases.map(\.rawValue)),
            RelinkNames.peripheralManager: Set(PeripheralManager1Member.allCases.map(\.rawValue)),
        ]
        for method in methods { if let names = contract[method.interface] { #expect(names.contains(method.name), "\(method) is not in the contract") } }
        // A write stream needs a link; its methods go to a stream path that does not exist: relinkd answers UnknownObject.
        for member in WriteStream1Member.allCases where member != .readyToWrite {
            methods.append(Method(path: rootCentral + "/stream0", interface: RelinkNames.writeStream, name: member.rawValue, inputs: []))
        }
        // Unregister last: it takes the caller's identifier away.
        methods.sort { ($0.name == Manager1Member.unregister.rawValue ? 1 : 0) < ($1.name == Manager1Member.unregister.rawValue ? 1 : 0) }

        let users: [(name: String, uid: UInt32)] = try ["root", "relink", "relink-e2e", "nobody"].map { ($0, try #require(Self.uid(of: $0))) }
        var checked = 0
        for user in users {
            let ownID = "access-\(user.name)"
            reply = try await system.call(register, as: user.uid, first: ownID)
            #expect(reply.error == nil, "\(user.name) Register: \(reply.text)")
            let ownCentral = APIPath.central(try #require(try? RestoreIdentifier(ownID))).rawValue
            for method in methods {
                let mayControl = user.uid == 0 || user.name == "relink"
                // On the caller's own identifier object, and on root's (another user's, but for root).
                let targets = method.path == rootCentral ? [ownCentral, rootCentral] : [method.path]
                for target in targets {
                    var m = method
                    m.path = target
                    let first = m.interface == RelinkNames.manager ? ownID : "x"
                    let answer = try await system.call(m, as: user.uid, first: first)
                    checked += 1
                    let error = answer.error ?? ""
                    #expect(!error.hasPrefix("gdbus:") && error != "org.freedesktop.DBus.Error.NoReply",
                            "\(user.name): \(m) got no answer: \(answer.text)")
                    if m.interface == RelinkNames.control && !mayControl {
                        #expect(error == "org.freedesktop.DBus.Error.AccessDenied", "\(user.name): \(m) must be refused by the bus: \(answer.text)")
                        continue
                    }
                    #expect(error != "org.freedesktop.DBus.Error.AccessDenied", "\(user.name): \(m) refused by the bus: \(answer.text)")
                    // access.md: another user's identifier object does not exist for a non-root caller.
                    if user.uid != 0 && target == rootCentral && m.interface != "org.freedesktop.DBus.Peer" {
                        #expect(error == "org.freedesktop.DBus.Error.UnknownObject", "\(user.name): \(m) on root's identifier: \(answer.text)")
                    }
                    // access.md, Control1.md: Control1 is root's; relinkd refuses relink itself.
                    if m.interface == RelinkNames.control && user.uid != 0 {
                        #expect(error == RelinkErrorName.notPermitted.rawValue, "\(user.name): \(m): \(answer.text)")
                    }
                    if m.interface == RelinkNames.writeStream {
                        #expect(error == "org.freedesktop.DBus.Error.UnknownObject", "\(user.name): \(m): \(answer.text)")
                    }
                }
            }
        }
        #expect(checked > 4 * 60, "only \(checked) calls")
        #expect(!system.log.isEmpty)
    }

    @Test(.enabled(if: canRun, "needs root, setpriv, gdbus, Debian's system.conf and the users relink, relink-e2e, nobody (scripts/setup.sh)"))
    func theGroupDropInNarrowsTheAPIToTheGroup() async throws {
        // The documented drop-in, with a group made for the test: nobody is not in it, relink-e2e is (by its primary group).
        let dropIn = Self.repository.appendingPathComponent("systemd/examples/org.relink-group.conf").path
        var text = try String(contentsOfFile: dropIn, encoding: .utf8)
        let e2eGroup = try #require(getpwnam("relink-e2e")?.pointee.pw_gid)
        let groupName = try #require(getgrgid(e2eGroup).map { String(cString: $0.pointee.gr_name) })
        text = text.replacingOccurrences(of: "group=\"relink-users\"", with: "group=\"\(groupName)\"")
        let local = FileManager.default.temporaryDirectory.appendingPathComponent("relink-dropin-\(UUID().uuidString).conf").path
        try text.write(toFile: local, atomically: true, encoding: .utf8)
        _ = chmod(local, 0o644)
        defer { try? FileManager.default.removeItem(atPath: local) }
        let system = try await System(dropIns: [local])
        defer { system.stop() }
        let list = Method(path: "/org/relink", interface: RelinkNames.manager, name: Manager1Member.listIdentifiers.rawValue, inputs: [])
        try await system.waitForRelinkd(list)
        let register = Method(path: "/org/relink", interface: RelinkNames.manager, name: Manager1Member.register.rawValue, inputs: ["s", "a{sv}"])
        let member = try await system.call(register, as: try #require(Self.uid(of: "relink-e2e")), first: "in-group")
        #expect(member.error == nil, "\(member.text)")
        let outsider = try await system.call(register, as: try #require(Self.uid(of: "nobody")), first: "outside")
        #expect(outsider.error == "org.freedesktop.DBus.Error.AccessDenied", "\(outsider.text)")
        let root = try await system.call(list, as: 0, first: "")
        #expect(root.error == nil, "\(root.text)")
        let control = Method(path: "/org/relink/control", interface: RelinkNames.control, name: "Status", inputs: [])
        let memberControl = try await system.call(control, as: try #require(Self.uid(of: "relink-e2e")), first: "")
        #expect(memberControl.error == "org.freedesktop.DBus.Error.AccessDenied", "\(memberControl.text)")
    }
}

/// GVariant text (gdbus's argument syntax) for a value of a D-Bus type.
enum GVariantText {
    /// A plain value of the complete type `type`.
    static func value(of type: String) -> String {
        guard let first = type.first else { return "''" }
        switch first {
        case "s": return "'x'"
        case "o": return "'/'"
        case "g": return "''"
        case "b": return "false"
        case "d": return "1.0"
        case "y", "n", "q", "i", "u", "x", "t", "h": return "1"
        case "v": return "<'x'>"
        case "a": return type.dropFirst().first == "{" ? "{}" : "[]"
        case "(":
            let members = completeTypes(in: String(type.dropFirst().dropLast())).map { value(of: $0) }
            return "(" + members.joined(separator: ", ") + (members.count == 1 ? ",)" : ")")
        default: return "''"
        }
    }

    /// The complete types of a signature, in order.
    static func completeTypes(in signature: String) -> [String] {
        var types: [String] = []
        var rest = Substring(signature)
        while !rest.isEmpty {
            let length = completeLength(rest)
            types.append(String(rest.prefix(length)))
            rest = rest.dropFirst(length)
        }
        return types
    }

    private static func completeLength(_ s: Substring) -> Int {
        guard let first = s.first else { return 0 }
        switch first {
        case "a": return 1 + completeLength(s.dropFirst())
        case "(", "{":
            let close: Character = first == "(" ? ")" : "}"
            var depth = 0
            for (offset, c) in s.enumerated() {
                if c == first { depth += 1 } else if c == close { depth -= 1 }
                if depth == 0 { return offset + 1 }
            }
            return s.count
        default: return 1
        }
    }
}

/// The methods in an introspection document, as gdbus prints it.
enum Introspection {
    static func methods(in reply: String, path: String) -> [Method] {
        // gdbus prints the XML as a quoted string; its quotes and newlines escaped.
        let xml = reply.replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(of: "\\'", with: "'").replacingOccurrences(of: "\\\"", with: "\"")
        var methods: [Method] = []
        var interface = ""
        var current: Method?
        for raw in xml.components(separatedBy: "<") {
            let tag = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if tag.hasPrefix("interface ") { interface = attribute("name", in: tag) ?? "" }
            if tag.hasPrefix("method ") {
                if let m = current { methods.append(m) }
                current = Method(path: path, interface: interface, name: attribute("name", in: tag) ?? "", inputs: [])
                if tag.hasSuffix("/>"), let m = current {
                    methods.append(m)
                    current = nil
                }
            } else if tag.hasPrefix("arg "), current != nil, attribute("direction", in: tag) != "out", let type = attribute("type", in: tag) {
                current?.inputs.append(type)
            } else if tag.hasPrefix("/method") {
                if let m = current { methods.append(m) }
                current = nil
            }
        }
        return methods
    }

    typealias Method = SystemBusAccessTests.Method

    private static func attribute(_ name: String, in tag: String) -> String? {
        guard let range = tag.range(of: name + "=\"") else { return nil }
        let rest = tag[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}

/// Runs a tool to its end on its own thread, its stdout and stderr together:
/// a service the tool talks to may be served by this process's cooperative
/// pool, which must not be blocked.
func runTool(_ tool: String, _ args: [String]) async throws -> (status: Int32, output: String) {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            do {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: tool)
                p.arguments = args
                let pipe = Pipe()
                p.standardOutput = pipe
                p.standardError = pipe
                try p.run()
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                p.waitUntilExit()
                continuation.resume(returning: (p.terminationStatus, String(decoding: data, as: UTF8.self)))
            } catch {
                continuation.resume(throwing: error)
            }
        }.start()
    }
}
