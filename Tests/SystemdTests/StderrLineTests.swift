import Testing
@testable import Systemd

struct StderrLineTests {
    @Test func oneReadableLineWithLevelMessageAndSortedMetadata() {
        let line = StderrLine.format(
            level: .warning, message: "connect failed\nretrying",
            metadata: ["RELINK_ATTEMPT": "3", "RELINK_ERROR": "le-connection-abort-by-local: Failed", "EMPTY": ""],
            identifier: "relinkd", timestamp: "T")
        #expect(line == #"T warning relinkd: connect failed\nretrying EMPTY="" RELINK_ATTEMPT=3 RELINK_ERROR="le-connection-abort-by-local: Failed""#)
        #expect(!line.contains("\n"))
    }

    @Test func controlCharactersAndQuotesAreEscaped() {
        #expect(StderrLine.escape("a\tb\u{1B}c\\") == #"a\tb\u{1b}c\\"#)
        let line = StderrLine.format(level: .info, message: "m", metadata: ["K": #"say "hi""#], identifier: "r", timestamp: "T")
        #expect(line == #"T info r: m K="say \"hi\"""#)
    }

    @Test func timestampIsISO8601UTCWithMilliseconds() throws {
        let stamp = StderrLine.now()
        let pattern = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/
        #expect(try pattern.wholeMatch(in: stamp) != nil, "\(stamp)")
    }
}
