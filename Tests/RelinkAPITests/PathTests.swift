import Foundation
import DBus
import RelinkAPI
import RelinkModel
import Testing

@Suite("Object paths")
struct PathTests {
    @Test(arguments: ["front-door", "org.example.lock:1", "a_b", "Z9"])
    func identifiersRoundTripThroughTheirPath(_ text: String) throws {
        let id = try RestoreIdentifier(text)
        let path = APIPath.central(id)
        #expect(path.rawValue.hasPrefix(APIPath.centralPrefix))
        #expect(APIPath.identifier(of: path) == id)
        #expect(APIPath.target(of: path) == .central(APIPath.escape(text)))
    }

    @Test func escapingKeepsOnlyLettersAndDigits() {
        #expect(APIPath.escape("a-b.c_d:é") == "a_2db_2ec_5fd_3a_c3_a9")
        #expect(APIPath.unescape("a_2db_2ec_5fd_3a_c3_a9") == "a-b.c_d:é")
        #expect(APIPath.unescape("a_2") == nil)
        #expect(APIPath.unescape("a_2G") == nil)
        #expect(APIPath.unescape("a-b") == nil)
    }

    @Test func peripheralsRoundTripThroughTheirPath() {
        let id = PeripheralID()
        let path = APIPath.peripheral(id)
        #expect(!path.rawValue.contains("-"))
        #expect(APIPath.peripheralID(of: path) == id)
        #expect(APIPath.peripheralID(of: APIPath.manager) == nil)
        #expect(APIPath.target(of: APIPath.manager) == .other)
    }

    /// The path element is the UUID in lower case with `_` for `-`, as
    /// Foundation would write it: pinned for 200 random identifiers.
    @Test func aPeripheralsPathIsItsLowerCaseUUID() throws {
        for _ in 0..<200 {
            let id = PeripheralID()
            let expected = "/org/relink/peripheral/" + id.uuid.uuidString.lowercased().map { $0 == "-" ? "_" : $0 }
            #expect(APIPath.peripheral(id).rawValue == expected)
            #expect(id.description == id.uuid.uuidString)
        }
    }
}
