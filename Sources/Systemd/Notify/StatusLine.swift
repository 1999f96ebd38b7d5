/// Makes text safe for `STATUS=`: one line, no control characters.
enum StatusLine {
    /// Replaces every control character (newlines, tabs, escape, DEL, ...) by a
    /// space and trims surrounding whitespace, so a multi-line error message
    /// cannot inject further `KEY=value` assignments into the notify datagram.
    static func sanitise(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            scalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
        }
        let line = String(scalars)
        let trimmed = line.drop(while: { $0 == " " })
        return String(trimmed.reversed().drop(while: { $0 == " " }).reversed())
    }
}
