import Logging
import Testing
@testable import Systemd

struct LogDestinationTests {
    @Test func autoFollowsJournalStreamThenTerminalThenSocket() {
        let auto = LogDestination.auto
        #expect(auto.resolve(environment: ["JOURNAL_STREAM": "8:1234"], journalSocketExists: false, stderrIsTerminal: true) == .journal)
        #expect(auto.resolve(environment: [:], journalSocketExists: true, stderrIsTerminal: true) == .stderr)
        #expect(auto.resolve(environment: [:], journalSocketExists: true, stderrIsTerminal: false) == .journal)
        #expect(auto.resolve(environment: [:], journalSocketExists: false, stderrIsTerminal: false) == .stderr)
        #expect(auto.resolve(environment: ["JOURNAL_STREAM": ""], journalSocketExists: false, stderrIsTerminal: false) == .stderr)
    }

    @Test func explicitDestinationsAreKept() {
        for destination in [LogDestination.journal, .stderr] {
            #expect(destination.resolve(environment: [:], journalSocketExists: false, stderrIsTerminal: true) == destination)
            #expect(destination.resolve(environment: ["JOURNAL_STREAM": "1:2"], journalSocketExists: true, stderrIsTerminal: false) == destination)
        }
    }

    @Test func settingParsesFromItsName() {
        #expect(LogDestination(rawValue: "journal") == .journal)
        #expect(LogDestination(rawValue: "syslog") == nil)
        #expect(LogDestination.allCases.map(\.rawValue) == ["auto", "journal", "stderr"])
    }

    @Test func handlerIsValueSemantic() {
        var first = JournalLogHandler(label: "a", identifier: "relinkd", destination: .stderr, logLevel: .info)
        var second = first
        second.logLevel = .debug
        second[metadataKey: "RELINK_ADAPTER"] = "hci0"
        #expect(first.logLevel == .info)
        #expect(first[metadataKey: "RELINK_ADAPTER"] == nil)
        first.metadata = ["x": "1"]
        #expect(second.metadata == ["RELINK_ADAPTER": "hci0"])
        #expect(first.destination == .stderr)
    }
}
