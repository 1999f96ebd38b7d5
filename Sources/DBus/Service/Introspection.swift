/// `org.freedesktop.DBus.Introspectable` XML for exported objects.
enum Introspection {
    static let header = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    static let introspectable = DBusInterface(
        "org.freedesktop.DBus.Introspectable",
        methods: [DBusMethod("Introspect", out: [DBusArgument("xml_data", .string)]) { _ in [] }])

    static let peer = DBusInterface(
        "org.freedesktop.DBus.Peer", methods: [DBusMethod("Ping") { _ in [] }])

    static let properties = DBusInterface(
        "org.freedesktop.DBus.Properties",
        methods: [
            DBusMethod("Get", in: [.init("interface_name", .string), .init("property_name", .string)], out: [.init("value", .variant)]) { _ in [] },
            DBusMethod("GetAll", in: [.init("interface_name", .string)], out: [.init("props", .dictionary(key: .string, value: .variant))]) { _ in [] },
            DBusMethod("Set", in: [.init("interface_name", .string), .init("property_name", .string), .init("value", .variant)]) { _ in [] },
        ],
        signals: [
            DBusSignal(
                "PropertiesChanged",
                [
                    .init("interface_name", .string), .init("changed_properties", .dictionary(key: .string, value: .variant)),
                    .init("invalidated_properties", .array(.string)),
                ])
        ])

    static let objectManager = DBusInterface(
        "org.freedesktop.DBus.ObjectManager",
        methods: [
            DBusMethod(
                "GetManagedObjects",
                out: [.init("objects", .dictionary(key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant))))]
            ) { _ in [] }
        ],
        signals: [
            DBusSignal("InterfacesAdded", [.init("object", .objectPath), .init("interfaces", .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)))]),
            DBusSignal("InterfacesRemoved", [.init("object", .objectPath), .init("interfaces", .array(.string))]),
        ])

    /// The XML for a node: its interfaces (standard ones first) and its
    /// direct children.
    static func xml(object: ExportedObject?, isManager: Bool, children: [String]) -> String {
        var out = header + "<node>\n"
        var ifaces = [introspectable, peer]
        if object != nil { ifaces.append(properties) }
        if isManager { ifaces.append(objectManager) }
        ifaces += object?.interfaces ?? []
        for i in ifaces { append(i, to: &out) }
        for c in children { out += "  <node name=\"\(escape(c))\"/>\n" }
        out += "</node>\n"
        return out
    }

    private static func append(_ i: DBusInterface, to out: inout String) {
        out += "  <interface name=\"\(escape(i.name))\">\n"
        for m in i.methods {
            out += "    <method name=\"\(escape(m.name))\">\n"
            for a in m.inArguments { out += arg(a, direction: "in") }
            for a in m.outArguments { out += arg(a, direction: "out") }
            out += "    </method>\n"
        }
        for s in i.signals {
            out += "    <signal name=\"\(escape(s.name))\">\n"
            for a in s.arguments { out += arg(a, direction: nil) }
            out += "    </signal>\n"
        }
        for p in i.properties {
            out += "    <property name=\"\(escape(p.name))\" type=\"\(escape(p.type.signature))\" access=\"\(p.access.rawValue)\""
            if !p.emitsChanged {
                let value = p.constant ? "const" : "false"
                out += ">\n      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"\(value)\"/>\n    </property>\n"
            } else {
                out += "/>\n"
            }
        }
        out += "  </interface>\n"
    }

    private static func arg(_ a: DBusArgument, direction: String?) -> String {
        var s = "      <arg name=\"\(escape(a.name))\" type=\"\(escape(a.type.signature))\""
        if let direction { s += " direction=\"\(direction)\"" }
        return s + "/>\n"
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(c)
            }
        }
        return out
    }
}
