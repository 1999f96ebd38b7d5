import RelinkClient

/// How relinkctl shows a value to a person: hex, and beside it the text
/// when every byte is printable ASCII (`6c6f636b6564  "locked"`). One form
/// for `read` and `events`; `--json` keeps the bare hex for programs.
enum ValueText {
    /// `hex` or `hex  "text"`; `(empty)` for no bytes.
    static func line(_ bytes: [UInt8]) -> String {
        guard !bytes.isEmpty else { return "(empty)" }
        let hex = RelinkArguments.hex(bytes)
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return hex }
        return "\(hex)  \(quoted(String(decoding: bytes, as: UTF8.self)))"
    }

    /// `"text"`, with quotes and backslashes escaped.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
