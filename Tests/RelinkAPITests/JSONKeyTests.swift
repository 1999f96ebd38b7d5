import Foundation
import RelinkAPI
import RelinkModel
import Testing

/// The one casing of relink's JSON keys (docs/api/README.md#json): the rule,
/// the conversions of D-Bus and configuration names, and the `Status`
/// document's keys with every optional entry present.
@Suite struct JSONKeyTests {
    @Test func theRuleTakesCamelCaseAndNothingElse() {
        for key in ["id", "adapterState", "serviceUUIDs", "lastErrorAtMs", "mtu"] { #expect(JSONKey.isCamelCase(key), "\(key)") }
        for key in ["", "Status", "adapter_state", "published-services", "ServiceUUIDs", "a b", "1st"] { #expect(!JSONKey.isCamelCase(key), "\(key)") }
    }

    @Test func dBusAndConfigurationNamesBecomeJSONKeys() {
        let members = ["ScanServices": "scanServices", "UUIDs": "uuids", "RSSI": "rssi", "TxPower": "txPower", "MTU": "mtu",
                       "ServiceUUIDs": "serviceUUIDs", "GAPNameSeen": "gapNameSeen", "AdapterState": "adapterState", "Version": "version"]
        for (name, key) in members { #expect(JSONKey.fromMemberName(name) == key, "\(name)") }
        #expect(JSONKey.fromWords("published-services") == "publishedServices")
        #expect(JSONKey.fromWords("allow_duplicates") == "allowDuplicates")
        #expect(QuotaBound.allCases.allSatisfy { JSONKey.isCamelCase($0.jsonKey) })
    }

    @Test func theWalkerNamesEachKeyOutOfCaseAndSkipsDataKeyedObjects() throws {
        let document = try JSONSerialization.jsonObject(with: Data(#"""
            {"ok": 1, "bad_one": {"inner_too": 2}, "list": [{"fine": 1}, {"Not": 2}],
             "serviceData": {"0000180f-0000-1000-8000-00805f9b34fb": "64"}}
            """#.utf8))
        #expect(JSONKey.keysNotCamelCase(in: document) == ["bad_one", "bad_one.inner_too", "list[1].Not"])
    }

    /// Every key of the Status document, each optional entry filled: the
    /// document's Swift names are its keys, so a field spelt otherwise fails here.
    @Test func theStatusDocumentIsCamelCaseThroughout() throws {
        let connection = StatusDocument.Connection(peripheral: "p", state: "linked", address: "00:00:00:00:00:02", attempt: 1, bonded: true,
                                                   identityAddress: true, unarmed: ["s/c"], lastError: "e", lastErrorAtMs: 1)
        let launch = StatusDocument.Launch(busName: "org.example.Lock", wakeOn: ["connected"], systemdUnit: "lock.service", state: "limited",
                                           startsInWindow: 5, lastError: "e", untilMs: 2)
        let document = StatusDocument(
            ready: true, adapter: "hci0", discovering: false, adapterState: "poweredOn", adapterRoles: ["central"],
            identifiers: [.init(id: "lock", connections: [connection], subscriptions: 1, scanning: true, launch: launch)],
            quarantined: [.init(path: "/a", movedTo: "/b", reason: "corrupt", message: "m", atMs: 3)],
            store: .init(refusingWrites: true, unstoredEvents: 4, lastError: "full"),
            unreadableRows: [.init(table: "t", identifier: "lock", reason: "r")],
            quotas: .init(bounds: Dictionary(uniqueKeysWithValues: QuotaBound.allCases.map { ($0.jsonKey, 1) }),
                          users: [.init(uid: 1000, bounded: true, use: [QuotaBound.publishedServices.jsonKey: 1])]),
            inbox: .init(queued: 1, highWater: 2))
        let json = document.json()
        let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8))
        #expect(JSONKey.keysNotCamelCase(in: parsed).isEmpty, "\(json)")
        #expect(json.contains(#""lastErrorAtMs":1"#) && json.contains(#""publishedServices":1"#), "\(json)")
        #expect(try StatusDocument(json: json) == document)
    }
}
