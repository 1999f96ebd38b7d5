import Foundation
import RelinkModel
import Testing
@testable import Systemd

/// `RelinkModel.JournalField` is the one list of relink's journal field
/// names: no other source file spells one, each is a valid journal field
/// name, and `docs/journal.md` documents exactly these.
struct JournalFieldTests {
    static let sources = TestPaths.packageRoot + "/Sources"
    static let enumFile = "RelinkModel/JournalField.swift"
    static let documentation = TestPaths.packageRoot + "/docs/journal.md"
    static let catalog = TestPaths.packageRoot + "/systemd/relink.catalog"

    /// `Systemd` imports no relink module, so it spells the two relink fields
    /// it writes itself in `RelinkField`; nothing else outside the enum may.
    static let systemdOwn = (file: "Systemd/Journal/RelinkField.swift", names: [RelinkField.event, RelinkField.error])

    /// Every `"RELINK_…"` string literal in `Sources/*.swift` but the enum's,
    /// as `path:line: name` (paths relative to `Sources/`). Environment
    /// variable lookups (`environment["RELINK_…"]`, `childEnvironment[…]`) are not journal fields.
    static func literalsOutsideTheEnum() throws -> [(file: String, line: Int, name: String)] {
        let literal = try Regex(#""(RELINK_[A-Za-z0-9_]*)""#)
        var found: [(file: String, line: Int, name: String)] = []
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources)
        for file in files.sorted() where file.hasSuffix(".swift") && file != enumFile {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                for match in line.matches(of: literal) {
                    if line[..<match.range.lowerBound].hasSuffix("nvironment[") { continue }  // environment[...], childEnvironment[...]
                    let name = String(line[match.range].dropFirst().dropLast())
                    found.append((file, index + 1, name))
                }
            }
        }
        return found
    }

    @Test func noFieldNameIsSpelledOutsideTheEnum() throws {
        let stray = try Self.literalsOutsideTheEnum().filter {
            !($0.file == Self.systemdOwn.file && Self.systemdOwn.names.contains($0.name))
        }
        #expect(stray.isEmpty, """
            use RelinkModel.JournalField (add a case, document it in docs/journal.md) instead of:
            \(stray.map { "Sources/\($0.file):\($0.line): \($0.name)" }.joined(separator: "\n"))
            """)
    }

    @Test func theScanFindsLiteralsAndSkipsEnvironmentLookups() throws {
        let found = try Self.literalsOutsideTheEnum()
        // The scan does see Systemd's two, so it would see any other.
        #expect(Set(found.map(\.name)) == Set(Self.systemdOwn.names))
        // relinkd reads RELINK_TEST_HOOKS from its environment: not a field, not reported.
        let relinkd = try String(contentsOfFile: Self.sources + "/relinkd/Relinkd.swift", encoding: .utf8)
        #expect(relinkd.contains(#"environment["RELINK_TEST_HOOKS"]"#))
    }

    @Test func systemdsOwnFieldsAreCasesOfTheEnum() {
        #expect(RelinkField.event == JournalField.event.rawValue)
        #expect(RelinkField.error == JournalField.error.rawValue)
        #expect(JournalField(rawValue: RelinkField.messageID) == nil, "MESSAGE_ID is journald's, not relink's")
    }

    @Test(arguments: JournalField.allCases)
    func everyFieldIsAValidRelinkJournalFieldName(field: JournalField) {
        #expect(field.rawValue.hasPrefix("RELINK_"))
        #expect(JournalFieldName.isValid(field.rawValue))
        #expect(!JournalEntry.ownedFields.contains(field.rawValue))
    }

    /// The `RELINK_` names in the first column of docs/journal.md's table.
    static func documentedFields() throws -> [String] {
        let text = try String(contentsOfFile: documentation, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `RELINK_") else { return nil }
            return line.dropFirst(3).prefix(while: { $0 != "`" }).description
        }
    }

    @Test func everyFieldIsDocumentedOnceAndNothingElse() throws {
        let documented = try Self.documentedFields()
        let names = JournalField.allCases.map(\.rawValue)
        #expect(Set(names).subtracting(documented).sorted() == [], "not in docs/journal.md")
        #expect(Set(documented).subtracting(names).sorted() == [], "documented but not a JournalField")
        #expect(documented.count == Set(documented).count, "documented twice")
    }

    @Test func theCatalogUsesOnlyKnownFields() throws {
        let text = try String(contentsOfFile: Self.catalog, encoding: .utf8)
        let used = Set(text.matches(of: try Regex(#"@(RELINK_[A-Z0-9_]+)@"#)).map { String(text[$0.range].dropFirst().dropLast()) })
        #expect(!used.isEmpty)
        #expect(used.filter { JournalField(rawValue: $0) == nil }.sorted() == [])
    }
}
