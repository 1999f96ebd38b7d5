import Testing

@testable import DBus
import RelinkModel

@Suite struct SignatureTests {
    @Test(arguments: ["", "s", "a{sv}", "a{sa{sv}}", "a{oa{sa{sv}}}", "(ii)", "a(yv)", "ybnqiuxtdsogh", "aai", "v"])
    func validSignaturesParseAndPrintBack(_ s: String) throws {
        let sig = try Signature(s)
        #expect(sig.rawValue == s)
        #expect(sig.types.map(\.signature).joined() == s)
    }

    @Test(arguments: ["a", "(", "()", "a{vs}", "{ss}", "a{s}", "a{sss}", "z", "(i", "i)", "a{(i)s}", "s\0"])
    func invalidSignaturesAreRejected(_ s: String) {
        #expect(throws: DBusError.self) { try Signature(s) }
    }

    @Test func nestingLimitsAreEnforced() throws {
        _ = try Signature(String(repeating: "a", count: 32) + "i")
        #expect(throws: DBusError.self) { try Signature(String(repeating: "a", count: 33) + "i") }
        _ = try Signature(String(repeating: "(", count: 32) + "i" + String(repeating: ")", count: 32))
        #expect(throws: DBusError.self) {
            try Signature(String(repeating: "(", count: 33) + "i" + String(repeating: ")", count: 33))
        }
        #expect(throws: DBusError.self) { try Signature(String(repeating: "i", count: 256)) }
    }
}

@Suite struct NameTests {
    @Test func objectPaths() throws {
        for ok in ["/", "/a", "/org/bluez/hci0", "/a_b/C9"] { _ = try ObjectPath(ok) }
        for bad in ["", "a", "//", "/a/", "/a//b", "/a-b", "/ä", "/a\0"] {
            #expect(throws: DBusError.self) { try ObjectPath(bad) }
        }
        #expect(try ObjectPath("/org/bluez").isDescendant(of: .root))
        #expect(try ObjectPath("/org/bluez/hci0").isDescendant(of: ObjectPath("/org/bluez")))
        #expect(try !ObjectPath("/org/bluezz").isDescendant(of: ObjectPath("/org/bluez")))
        #expect(try ObjectPath("/org/bluez/hci0").parent == ObjectPath("/org/bluez"))
        #expect(try ObjectPath("/org").parent == .root)
        #expect(ObjectPath.root.parent == nil)
        // Every parent is the path a validating init makes of the prefix.
        for text in ["/a", "/org/bluez/hci0/dev_00_11/service000a/char000b", "/a_b/C9/x"] {
            var path: ObjectPath? = try ObjectPath(text)
            var steps = 0
            while let p = path?.parent {
                #expect(try ObjectPath(p.rawValue) == p)
                #expect(path?.isDescendant(of: p, orSelf: false) == true)
                path = p
                steps += 1
            }
            #expect(steps == text.split(separator: "/").count)
        }
    }

    @Test func interfaceMemberAndBusNames() {
        #expect(DBusNames.isValidInterface("org.bluez.Device1"))
        #expect(!DBusNames.isValidInterface("org"))
        #expect(!DBusNames.isValidInterface("org..bluez"))
        #expect(!DBusNames.isValidInterface("org.1bluez"))
        #expect(DBusNames.isValidMember("Connect"))
        #expect(!DBusNames.isValidMember("Con.nect"))
        #expect(!DBusNames.isValidMember("1x"))
        #expect(DBusNames.isValidBusName(":1.42"))
        #expect(DBusNames.isValidBusName("org.relink-test.x"))
        #expect(!DBusNames.isValidBusName("org"))
        #expect(!DBusNames.isValidBusName(":1..2"))
    }

    @Test func invalidNamesInCallsAreRejectedBeforeLibdbus() {
        #expect(throws: DBusError.self) {
            try Message.methodCall(destination: "not a name", path: .root, interface: nil, member: "X")
        }
        #expect(throws: DBusError.self) {
            try Message.methodCall(destination: nil, path: .root, interface: "bad", member: "X")
        }
        #expect(throws: DBusError.self) {
            try Message.methodCall(destination: nil, path: .root, interface: nil, member: "a.b")
        }
    }
}

@Suite struct ValueValidationTests {
    @Test func mismatchedElementsAndNULsAreRejected() {
        #expect(throws: DBusError.self) { try DBusValue.array(.int32, [.string("x")]).validate() }
        #expect(throws: DBusError.self) {
            try DBusValue.dictionary(key: .string, value: .int32, [.init(.int32(1), .int32(2))]).validate()
        }
        #expect(throws: DBusError.self) { try DBusValue.dictionary(key: .variant, value: .int32, []).validate() }
        #expect(throws: DBusError.self) { try DBusValue.structure([]).validate() }
        #expect(throws: DBusError.self) { try DBusValue.string("a\0b").validate() }
        #expect(throws: DBusError.self) { try DBusValue.variant(.array(.string, [.int32(1)])).validate() }
    }

    @Test func codableRoundTrip() throws {
        let managed: [ObjectPath: [String: [String: DBusValue]]] = [
            try ObjectPath("/org/bluez/hci0"): ["org.bluez.Adapter1": ["Powered": .boolean(true), "Name": .string("x")]]
        ]
        let v = managed.dbusValue
        #expect(v.type.signature == "a{oa{sa{sv}}}")
        let back = try v.decode(as: [ObjectPath: [String: [String: DBusValue]]].self)
        #expect(back == managed)
        #expect(throws: DBusError.self) { try v.decode(as: [String: String].self) }
        #expect(try DBusValue.variant(.uint16(3)).decode(as: UInt16.self) == 3)
        #expect(try [UInt8](dbusValue: [UInt8]([1, 2, 3]).dbusValue) == [1, 2, 3])
    }

    @Test func matchRuleTextAndLocalMatching() throws {
        let rule = SignalMatch(sender: ":1.5", interface: "org.x.Y", member: "Z", pathNamespace: try ObjectPath("/a"), arguments: [0: "it's"])
        #expect(rule.description == "type='signal',sender=':1.5',interface='org.x.Y',member='Z',path_namespace='/a',arg0='it'\\''s'")
        var m = try Message.signal(path: ObjectPath("/a/b"), interface: "org.x.Y", member: "Z", body: [.string("it's")])
        m.sender = ":1.5"
        #expect(rule.matches(m, owner: nil))
        m.body = [.string("other")]
        #expect(!rule.matches(m, owner: nil))
        let wellKnown = SignalMatch(sender: "org.bluez")
        m.sender = ":1.9"
        #expect(wellKnown.matches(m, owner: ":1.9"))
        #expect(!wellKnown.matches(m, owner: ":1.8"))
        #expect(!wellKnown.matches(m, owner: nil))
    }
}
