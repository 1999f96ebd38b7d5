import RelinkAPI
import DBus
import RelinkClient
import Testing

@Suite struct PathTests {
    @Test func lettersAndDigitsAreKeptEverythingElseEscaped() throws {
        #expect(APIPath.escape("frontDoor42") == "frontDoor42")
        #expect(APIPath.escape("front-door") == "front_2ddoor")
        #expect(APIPath.escape("a_b") == "a_5fb")
        #expect(APIPath.escape("org.example.lock") == "org_2eexample_2elock")
        #expect(APIPath.escape("é") == "_c3_a9")
        #expect(APIPath.escape(" \u{7f}") == "_20_7f")
    }

    @Test func centralPathIsValidForAnyAllowedIdentifier() throws {
        #expect(try APIPath.central(for: "front-door").rawValue == "/org/relink/central/front_2ddoor")
        #expect(try APIPath.central(for: "org.example.lock").rawValue == "/org/relink/central/org_2eexample_2elock")
        let long = "a" + String(repeating: ":", count: 127)   // 128 characters, the longest
        let path = try APIPath.central(for: long)
        #expect(path.rawValue.hasPrefix("/org/relink/central/a_3a_3a"))
        #expect(ObjectPath.isValid(path.rawValue))
    }

    @Test(arguments: ["front-door", "a_b", "é-ü 🔒", "x", "_5f", String(repeating: "z", count: 255)])
    func escapingRoundTrips(identifier: String) {
        #expect(APIPath.unescape(APIPath.escape(identifier)) == identifier)
    }

    @Test(arguments: ["_", "_4", "_4G", "_C3", "a-b", "_ff"])
    func malformedEscapesAreRejected(element: String) {
        #expect(APIPath.unescape(element) == nil)
    }

    @Test func peripheralPathsLowercaseAndUnderscore() throws {
        let path = try APIPath.peripheral(for: "6B1F2C3D-0000-4ABC-8DEF-0123456789AB")
        #expect(path.rawValue == "/org/relink/peripheral/6b1f2c3d_0000_4abc_8def_0123456789ab")
        #expect(APIPath.peripheralUUID(of: path) == "6B1F2C3D-0000-4ABC-8DEF-0123456789AB")
        #expect(APIPath.peripheralUUID(of: try ObjectPath("/org/relink/central/x")) == nil)
        #expect(throws: RelinkClientError.self) { try APIPath.peripheral(for: "00:00:00:00:00:02") }
    }

    @Test func goodIdentifiersPass() throws {
        for good in ["a", "9", "org.example.lock", "front-door", "a_b:c", String(repeating: "z", count: 128)] {
            try RelinkArguments.checkIdentifier(good)
        }
    }

    @Test func badIdentifiersGetInvalidArgumentsBeforeAnyCall() {
        for bad in ["", String(repeating: "a", count: 129), "é", "a\nb", "tab\there", "\u{0}", "-lead", ".lead", "a b", "a/b"] {
            var name: RelinkClientError.Name?
            do { _ = try APIPath.central(for: bad) } catch { name = error.name }
            #expect(name == .invalidArguments, "\(bad.debugDescription)")
        }
    }
}
