import Foundation
import Testing

/// Every public declaration of the modules other code builds on (`DBus`,
/// `RelinkAPI`, `RelinkClient`) carries a doc comment: a `///` line (or the
/// end of a `/** */` block) right above it, attributes aside. The check
/// reads the source files, so it fails on the commit that adds an
/// undocumented `public` line, whatever the compiler thinks.
@Suite("Doc comments on public declarations")
struct PublicDocCommentTests {
    static let modules = ["DBus", "RelinkAPI", "RelinkClient"]

    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")

    /// The `.swift` files of one module, recursively (DBus has subfolders).
    static func files(of module: String) throws -> [URL] {
        let root = sources.appendingPathComponent(module)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else {
            throw CocoaError(.fileReadNoSuchFile)
        }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
            .sorted { $0.path < $1.path }
    }

    @Test(arguments: modules)
    func everyPublicDeclarationHasADocComment(_ module: String) throws {
        var declarations = 0
        var missing: [String] = []
        let sources = Self.sources.standardizedFileURL
        for file in try Self.files(of: module).map(\.standardizedFileURL) {
            let text = try String(contentsOf: file, encoding: .utf8)
            let found = DocCommentScanner.publicDeclarations(in: text)
            declarations += found.count
            for d in found where !d.documented {
                let relative = file.path.dropFirst(sources.path.count + 1)
                missing.append("Sources/\(relative):\(d.line): \(d.text)")
            }
        }
        // A wrong path or a broken scanner must not pass as "nothing missing".
        #expect(declarations > 20, "found only \(declarations) public declarations in Sources/\(module)")
        #expect(missing.isEmpty, "public declarations without a doc comment in Sources/\(module):\n\(missing.joined(separator: "\n"))")
    }

    @Test func theScannerSeesAttributesCommentsAndStrings() {
        let sample = """
            /// Documented.
            public struct A {}

            public struct B {}

            /// Documented, attribute on its own line.
            @inlinable
            public func c() {}

            /// Documented, attribute on the same line.
            @discardableResult public func d() -> Int { 0 }

            /// Documented, multi-line attribute.
            @available(
                *, deprecated,
                message: "use c()")
            public func e() {}

            // A plain comment is not a doc comment.
            public func f() {}

            /**
             Documented with a block.
             */
            public func g() {}

            /// Documented, then a blank line: that no longer counts.

            public func h() {}

            @inlinable
            public func i() {}

            /// Documented, modifier before `public`.
            nonisolated public func j() {}

            let text = \"""
            public func notADeclaration() {}
            \"""
            """
        let found = DocCommentScanner.publicDeclarations(in: sample)
        let undocumented = found.filter { !$0.documented }.map(\.text)
        #expect(found.count == 10)
        #expect(undocumented == ["public struct B {}", "public func f() {}", "public func h() {}", "public func i() {}"])
    }
}

/// Finds the lines that start a public declaration and says whether a doc
/// comment stands right above each. Line-based, which is enough for this
/// code base: a declaration's `public` opens its line (after attributes
/// and modifiers such as `nonisolated`), and lines inside multi-line string
/// literals are skipped.
enum DocCommentScanner {
    struct Declaration: Equatable {
        var line: Int
        var text: String
        var documented: Bool
    }

    static let modifiers: Set<Substring> = [
        "final", "nonisolated", "static", "class", "override", "convenience", "required",
        "mutating", "nonmutating", "indirect", "dynamic", "lazy",
    ]

    static func publicDeclarations(in text: String) -> [Declaration] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        var result: [Declaration] = []
        var inString = false
        for (i, line) in lines.enumerated() {
            let quotes = line.components(separatedBy: "\"\"\"").count - 1
            defer { if quotes % 2 == 1 { inString.toggle() } }
            // `public import X` re-exports a module's types; it declares nothing.
            if inString || !isPublic(line) || line.hasPrefix("public import ") { continue }
            result.append(Declaration(line: i + 1, text: line, documented: hasDocComment(above: i, in: lines)))
        }
        return result
    }

    /// Whether `line` declares something public: `public` or `open` after
    /// any attributes and modifiers.
    static func isPublic(_ line: String) -> Bool {
        var rest = Substring(stripAttributes(line))
        while let word = rest.split(separator: " ", maxSplits: 1).first {
            let keyword = word.prefix { $0.isLetter }
            if keyword == "public" || keyword == "open" { return keyword.count == word.count || word.dropFirst(keyword.count).first == "(" }
            guard modifiers.contains(word) else { return false }
            rest = rest.dropFirst(word.count).drop { $0 == " " }
        }
        return false
    }

    /// `line` without leading attributes (`@name` or `@name(...)`).
    static func stripAttributes(_ line: String) -> String {
        var rest = Substring(line)
        while rest.first == "@" {
            var end = rest.index(after: rest.startIndex)
            while end < rest.endIndex, rest[end].isLetter || rest[end].isNumber || rest[end] == "_" { end = rest.index(after: end) }
            if end < rest.endIndex, rest[end] == "(" {
                var depth = 0
                while end < rest.endIndex {
                    if rest[end] == "(" { depth += 1 }
                    if rest[end] == ")" { depth -= 1 }
                    end = rest.index(after: end)
                    if depth == 0 { break }
                }
                if depth != 0 { return "" }
            }
            rest = rest[end...].drop { $0 == " " }
        }
        return String(rest)
    }

    /// Opening minus closing parentheses on a line.
    static func balance(_ line: String) -> Int {
        line.reduce(0) { $0 + ($1 == "(" ? 1 : $1 == ")" ? -1 : 0) }
    }

    /// Walks up from the declaration past attribute lines (one-line or
    /// spread over several lines) and looks at the line above them.
    static func hasDocComment(above index: Int, in lines: [String]) -> Bool {
        var j = index - 1
        while j >= 0 {
            let t = lines[j]
            if t.hasPrefix("@"), stripAttributes(t).isEmpty, balance(t) == 0 {
                j -= 1
                continue
            }
            if !t.hasPrefix("//"), balance(t) < 0 {
                // Maybe the last line of a multi-line attribute: find where
                // its parenthesis opens and check that line is an attribute.
                var depth = balance(t)
                var k = j - 1
                while k >= 0, depth < 0 {
                    depth += balance(lines[k])
                    k -= 1
                }
                if depth == 0, lines[k + 1].hasPrefix("@") {
                    j = k
                    continue
                }
            }
            break
        }
        guard j >= 0 else { return false }
        let above = lines[j]
        if above.hasPrefix("///") { return true }
        if above.hasSuffix("*/") {
            var k = j
            while k >= 0, !lines[k].hasPrefix("/*") { k -= 1 }
            return k >= 0 && lines[k].hasPrefix("/**")
        }
        return false
    }
}
