/// Bytes as hexadecimal text: the one parser and printer of the model's
/// byte values (data prefixes, values written from a command line).
public enum HexBytes {
    /// Parses hex bytes such as `01ff`, `01:ff`, `0x01ff` or `01 ff`; nil for
    /// an odd number of digits or a character that is not a hex digit. An
    /// empty text is no bytes.
    public static func parse(_ text: some StringProtocol) -> [UInt8]? {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        let cleaned = digits.utf8.filter { $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: " ") }
        guard cleaned.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(cleaned.count / 2)
        var i = 0
        while i < cleaned.count {
            guard let high = nibble(cleaned[i]), let low = nibble(cleaned[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    /// Lowercase hex, two digits per byte, no separator.
    public static func string(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
