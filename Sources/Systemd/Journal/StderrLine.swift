import Glibc
import Logging

/// The fallback format when journald is not there: one readable line per entry,
/// `2026-11-22T06:40:01.123Z warning relinkd: message KEY=value KEY="two words"`.
enum StderrLine {
    static func format(
        level: Logger.Level, message: String, metadata: Logger.Metadata,
        identifier: String, timestamp: String
    ) -> String {
        var line = "\(timestamp) \(level) \(identifier): \(escape(message))"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " \(escape(key))=\(quoteIfNeeded(escape(value.description)))"
        }
        return line
    }

    /// Keeps the entry on one line: `\n`, `\r`, `\t` and other control
    /// characters are written as escapes.
    static func escape(_ text: String) -> String {
        // Printable ASCII without a backslash (nearly every line) is kept as it is: no
        // per-scalar Unicode property look-up (a fifth of a 10,000-intent
        // start-up's CPU went there, logging each machine's decisions).
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\\": out += "\\\\"
            case _ where scalar.properties.generalCategory == .control:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func quoteIfNeeded(_ value: String) -> String {
        let plain = value.utf8.allSatisfy { $0 < 0x80 }
            ? !value.utf8.contains { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=") }
            : !value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" })  // per Character beyond ASCII, as before
        guard value.isEmpty || !plain else { return value }
        return "\"" + value.replacingQuotes() + "\""
    }

    /// UTC wall-clock time with milliseconds, ISO 8601.
    static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var parts = tm()
        var seconds = spec.tv_sec
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let millis = Int32(spec.tv_nsec / 1_000_000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(millis, 3))Z"
    }

    /// Writes the line and a newline with one `write(2)`, so concurrent
    /// loggers do not interleave within a line.
    static func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = Glibc.write(STDERR_FILENO, base + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        var out = ""
        for character in self { if character == "\"" { out += "\\\"" } else { out.append(character) } }
        return out
    }
}
