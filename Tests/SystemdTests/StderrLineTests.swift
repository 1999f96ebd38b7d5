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

extension StderrLineTests {
    /// The printable-ASCII fast path and the per-scalar path agree: every
    /// ASCII scalar alone, and beside a non-ASCII one (which takes the
    /// per-scalar path), is escaped by the same rule.
    @Test func everyASCIIScalarIsEscapedByOneRule() {
        func expected(_ scalar: Unicode.Scalar) -> String {
            switch scalar {
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            case "\\": "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: "\\u{\(String(scalar.value, radix: 16))}"
            default: String(scalar)
            }
        }
        for value in UInt32(0)..<0x80 {
            let scalar = Unicode.Scalar(value)!
            #expect(StderrLine.escape(String(scalar)) == expected(scalar), "U+\(String(value, radix: 16))")
            #expect(StderrLine.escape("é" + String(scalar)) == "é" + expected(scalar), "U+\(String(value, radix: 16))")
        }
        #expect(StderrLine.escape("bench.client-1/33AE8252 attempt=1 started") == "bench.client-1/33AE8252 attempt=1 started")
        #expect(StderrLine.escape("a\u{85}b") == "a\\u{85}b")
    }
}
