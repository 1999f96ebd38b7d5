import Foundation
import Testing

/// The limits docs/architecture.md promises for the sources (issue 19's
/// "done when"), checked so that a growing file or type is caught when it
/// grows, not in a later review: no file in `Sources/` over 400 lines, no
/// type in `RelinkDaemon` with more than 12 stored properties.
@Suite("Source layout limits")
struct SourceLayoutTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")

    static func swiftFiles(under directory: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
            .sorted { $0.path < $1.path }
    }

    @Test func noSourceFileIsOver400Lines() throws {
        let files = Self.swiftFiles(under: Self.sources)
        #expect(files.count > 100, "Sources/ not found at \(Self.sources.path)")
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            let count = lines.last == "" ? lines.count - 1 : lines.count
            #expect(count <= 400, "\(file.path) has \(count) lines")
        }
    }

    @Test func noDaemonTypeHasMoreThan12StoredProperties() throws {
        var counts: [String: Int] = [:]
        for file in Self.swiftFiles(under: Self.sources.appendingPathComponent("RelinkDaemon")) {
            for (type, count) in Self.storedProperties(in: try String(contentsOf: file, encoding: .utf8)) {
                counts["\(file.lastPathComponent): \(type)", default: 0] += count
            }
        }
        #expect(counts.count > 10, "too few types found: the scan below is broken")
        #expect(counts["Daemon.swift: Daemon"] != nil, "the Daemon actor was not found")
        for (type, count) in counts.sorted(by: { $0.key < $1.key }) {
            #expect(count <= 12, "\(type) has \(count) stored properties")
        }
    }

    /// Counts stored instance properties per type declaration: `var`/`let`
    /// lines directly in a struct, class or actor body, not `static`, not
    /// computed (no `{` after the declaration) and not in a nested scope.
    /// A line scan, enough for this code base's formatting (one declaration
    /// per line, braces at line ends).
    static func storedProperties(in source: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        var stack: [String?] = []  // per open brace: the type it opened, or nil
        let declaration = try? NSRegularExpression(
            pattern: #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|private|fileprivate|package|final|nonisolated)(?:\((?:set|unsafe)\))?\s+)*(struct|class|actor|enum|extension)\s+([A-Za-z_][\w.]*)"#)
        let property = try? NSRegularExpression(
            pattern: #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|private|fileprivate|package|nonisolated|lazy|weak|unowned)(?:\((?:set|unsafe)\))?\s+)*(var|let)\s+\w+"#)
        for raw in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            let range = NSRange(line.startIndex..., in: line)
            var opened: String?
            if let match = declaration?.firstMatch(in: line, range: range),
               let kind = Range(match.range(at: 1), in: line), let name = Range(match.range(at: 2), in: line),
               ["struct", "class", "actor"].contains(String(line[kind])) {
                opened = String(line[name])
            }
            if let owner = stack.last, let type = owner, opened == nil,
               property?.firstMatch(in: line, range: range) != nil, !line.contains("static "),
               !(line.contains("{") && !line.contains("=")) {
                counts[type, default: 0] += 1
            }
            for character in line {
                if character == "{" {
                    stack.append(opened)
                    opened = nil
                } else if character == "}" {
                    _ = stack.popLast()
                }
            }
        }
        return counts
    }
}
