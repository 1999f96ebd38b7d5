import Foundation

/// The configuration file's syntax (docs/relinkd-conf.md): `name = value`
/// lines, `#` comments, blank lines; the names those of ``QuotaBound`` with
/// a `max-` before them (`max-identifiers = 64`); byte counts may end in
/// `K`, `M` or `G` (binary: 1024).
extension UserBounds {
    /// A refusal of a configuration file: its line and why.
    public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The line, from 1.
        public var line: Int
        /// Why it was refused.
        public var reason: String
        /// `line N: reason`.
        public var description: String { "line \(line): \(reason)" }
    }

    /// The bounds a configuration file sets, the defaults for the others.
    /// - Throws: ``ConfigError`` for an unknown name, a name given twice, a
    ///   value that is not a whole number from 0 up, or a line without `=`.
    public static func parse(config text: String) throws(ConfigError) -> UserBounds {
        var limits = defaults.limits
        var seen: Set<QuotaBound> = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            let parts = trimmed.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw ConfigError(line: index + 1, reason: "expected name = value") }
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            guard name.hasPrefix("max-"), let bound = QuotaBound(rawValue: String(name.dropFirst(4))) else {
                throw ConfigError(line: index + 1, reason: "unknown setting \(name) (known: \(QuotaBound.allCases.map { "max-\($0)" }.joined(separator: ", ")))")
            }
            guard seen.insert(bound).inserted else { throw ConfigError(line: index + 1, reason: "\(name) is set twice") }
            guard let amount = Self.amount(value, bytes: bound == .transferBytes) else {
                throw ConfigError(line: index + 1, reason: "\(name) must be a whole number from 0 up\(bound == .transferBytes ? ", optionally ending in K, M or G" : ""), not \(value)")
            }
            limits[bound] = amount
        }
        return UserBounds(limits: limits)
    }

    private static func amount(_ text: String, bytes: Bool) -> Int64? {
        var digits = Substring(text)
        var scale: Int64 = 1
        if bytes, let last = digits.last, let unit = ["K": Int64(1) << 10, "M": Int64(1) << 20, "G": Int64(1) << 30][String(last).uppercased()] {
            scale = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int64(digits) else { return nil }
        let (product, overflow) = n.multipliedReportingOverflow(by: scale)
        return overflow ? nil : product
    }
}
