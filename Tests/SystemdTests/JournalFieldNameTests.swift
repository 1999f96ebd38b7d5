import Testing
@testable import Systemd

struct JournalFieldNameTests {
    @Test(arguments: [
        ("RELINK_RESTORE_ID", "RELINK_RESTORE_ID"),
        ("relink.restore-id", "RELINK_RESTORE_ID"),
        ("peripheral name", "PERIPHERAL_NAME"),
        ("_pid", "PID"),
        ("__", "FIELD"),
        ("", "FIELD"),
        ("9lives", "FIELD_9LIVES"),
        ("_9", "FIELD_9"),
        ("größe", "GR__E"),
        ("a=b", "A_B"),
    ])
    func keysAreSanitisedNotDropped(key: String, expected: String) {
        #expect(JournalFieldName.sanitise(key) == expected)
        #expect(JournalFieldName.isValid(JournalFieldName.sanitise(key)))
    }

    @Test func namesAreAtMost64Characters() {
        let name = JournalFieldName.sanitise(String(repeating: "k", count: 100))
        #expect(name == String(repeating: "K", count: 64))
    }

    @Test func validNamesAreRecognised() {
        #expect(JournalFieldName.isValid("MESSAGE_ID"))
        #expect(!JournalFieldName.isValid("message_id"))
        #expect(!JournalFieldName.isValid("_SYSTEMD_UNIT"))
        #expect(!JournalFieldName.isValid("1ST"))
    }
}
