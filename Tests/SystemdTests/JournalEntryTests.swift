import Logging
import RelinkModel
import Testing
@testable import Systemd

struct JournalEntryTests {
    private func event(_ level: Logger.Level, _ message: Logger.Message, error: (any Error)? = nil) -> LogEvent {
        var event = LogEvent(
            level: level, message: message, metadata: nil, source: "Relink",
            file: "RelinkDaemon/Link.swift", function: "connect()", line: 42)
        event.error = error
        return event
    }

    @Test(arguments: [
        (Logger.Level.trace, "7"), (.debug, "7"), (.info, "6"), (.notice, "5"),
        (.warning, "4"), (.error, "3"), (.critical, "2"),
    ])
    func levelsMapToSyslogPriorities(level: Logger.Level, priority: String) {
        let entry = JournalEntry(event: event(level, "x"), metadata: [:], identifier: "relinkd", label: "l")
        #expect(entry["PRIORITY"] == priority)
    }

    @Test func standardFieldsComeFromTheEvent() {
        let entry = JournalEntry(
            event: event(.info, "line one\nline two"), metadata: [:], identifier: "relinkd", label: "org.relink")
        #expect(entry["MESSAGE"] == "line one\nline two")
        #expect(entry["CODE_FILE"] == "RelinkDaemon/Link.swift")
        #expect(entry["CODE_LINE"] == "42")
        #expect(entry["CODE_FUNC"] == "connect()")
        #expect(entry["SYSLOG_IDENTIFIER"] == "relinkd")
        #expect(entry["SWIFT_LOG_LABEL"] == "org.relink")
        #expect(entry["SWIFT_LOG_SOURCE"] == "Relink")
    }

    @Test func metadataBecomesSanitisedFieldsAndOwnedNamesAreNotOverridden() {
        let metadata: Logger.Metadata = RelinkMessageID.connectFailed.metadata.merging([
            JournalField.attempt.rawValue: "3",
            "peripheral.name": "strap",
            "message": "not the message",
            "priority": "0",
            "link": ["state": "up", "rssi": .stringConvertible(-60)],
            "tags": ["a", "b"],
        ]) { $1 }
        let entry = JournalEntry(event: event(.warning, "failed"), metadata: metadata, identifier: "r", label: "l")
        #expect(entry["MESSAGE_ID"] == "2fdf5244b34f436eace2b7290ba4e3bd")
        #expect(entry["RELINK_EVENT"] == "connect-failed")
        #expect(entry["RELINK_ATTEMPT"] == "3")
        #expect(entry["PERIPHERAL_NAME"] == "strap")
        #expect(entry["MESSAGE"] == "failed")
        #expect(entry["META_MESSAGE"] == "not the message")
        #expect(entry["PRIORITY"] == "4")
        #expect(entry["META_PRIORITY"] == "0")
        #expect(entry["LINK_STATE"] == "up")
        #expect(entry["LINK_RSSI"] == "-60")
        #expect(entry["TAGS"] == #"["a", "b"]"#)
        #expect(entry.fields.filter { $0.name == "MESSAGE" }.count == 1)
        #expect(entry.fields.allSatisfy { JournalFieldName.isValid($0.name) })
    }

    @Test func eventErrorBecomesRelinkErrorUnlessGiven() {
        struct Boom: Error {}
        let plain = JournalEntry(event: event(.error, "x", error: Boom()), metadata: [:], identifier: "r", label: "l")
        #expect(plain["RELINK_ERROR"] == "Boom()")
        let given = JournalEntry(
            event: event(.error, "x", error: Boom()), metadata: [RelinkField.error: "explicit"], identifier: "r", label: "l")
        #expect(given.fields.filter { $0.name == "RELINK_ERROR" }.map(\.value) == ["explicit"])
    }
}
