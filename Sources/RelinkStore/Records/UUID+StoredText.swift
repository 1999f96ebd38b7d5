import Foundation

extension UUID {
    /// Peripheral identifiers are stored as lowercase text with dashes.
    var storedText: String { uuidString.lowercased() }

    /// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (either case) without
    /// Foundation's scanf-based parser, which dominated loading time.
    init?(storedText text: String) {
        var text = text
        let parsed: uuid_t?? = text.withUTF8 { utf8 -> uuid_t? in
            guard utf8.count == 36 else { return nil }
            var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let valid = withUnsafeMutableBytes(of: &value) { out -> Bool in
                var index = 0
                for byteIndex in 0..<16 {
                    if index == 8 || index == 13 || index == 18 || index == 23 {
                        guard utf8[index] == UInt8(ascii: "-") else { return false }
                        index += 1
                    }
                    guard let high = Self.nibble(utf8[index]), let low = Self.nibble(utf8[index + 1]) else { return false }
                    out[byteIndex] = high << 4 | low
                    index += 2
                }
                return true
            }
            return valid ? value : nil
        }
        guard let value = parsed ?? nil else { return nil }
        self.init(uuid: value)
    }

    @inline(__always)
    private static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case 0x30...0x39: char - 0x30
        case 0x61...0x66: char - 0x61 + 10
        case 0x41...0x46: char - 0x41 + 10
        default: nil
        }
    }
}

extension UUID {
    /// UUIDs (peripheral identifiers, Bluetooth UUIDs) are stored as 16-byte
    /// BLOBs, in the byte order of their text form, so BLOB order is text order.
    var storedBlob: Data { withUnsafeBytes(of: uuid) { Data($0) } }

    /// Reads 16 bytes at `offset` of a stored BLOB; nil when too short.
    init?(storedBlob bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        guard offset >= 0, bytes.count >= offset + 16 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 16)])) }
        self.init(uuid: value)
    }
}
