import Testing
@testable import Systemd

struct NotifierFormatTests {
    @Test(arguments: [
        ("one line", "one line"),
        ("two\nlines", "two lines"),
        ("cr\r\nlf", "cr  lf"),
        ("  padded\t", "padded"),
        ("READY=1\nSTATUS=forged", "READY=1 STATUS=forged"),
        ("escape \u{1B}[31m", "escape  [31m"),
        ("ünïcode ✓", "ünïcode ✓"),
    ])
    func statusIsOneLineWithoutControlCharacters(input: String, expected: String) {
        #expect(StatusLine.sanitise(input) == expected)
    }

    @Test func durationsBecomeWholeMicroseconds() {
        #expect(Duration.seconds(5).wholeMicroseconds == 5_000_000)
        #expect(Duration.milliseconds(1500).wholeMicroseconds == 1_500_000)
        #expect(Duration.nanoseconds(1999).wholeMicroseconds == 1)
        #expect(Duration.seconds(-3).wholeMicroseconds == 0)
        #expect(Duration.seconds(Int64.max).wholeMicroseconds == UInt64.max)
    }
}
