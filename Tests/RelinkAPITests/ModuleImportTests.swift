import Foundation
import Testing

/// docs/architecture.md's module table says which relink modules each module
/// may import; this reads the table and every `import` in `Sources/`, and
/// fails when the two differ in either direction (a new import the page does
/// not show, or a promise the code no longer needs), so the page stays true.
@Suite("Module imports as docs/architecture.md states them")
struct ModuleImportTests {
    static let root = SourceLayoutTests.sources.deletingLastPathComponent()

    /// relink's own modules, C modules included.
    static let relinkModules: Set<String> = [
        "RelinkModel", "DBus", "RelinkAPI", "Restoration", "DaemonCore", "RelinkStore", "BlueZ", "BlueZFake", "Systemd",
        "RelinkDaemon", "RelinkClient", "CDBus", "CSystemd",
    ]

    /// The rows of the table under `## Modules`: module -> the relink modules
    /// it imports, as the third column says (`none`, a list of backticked
    /// names, or `all of the above but X`); rows that defer to their
    /// targets are left out.
    static func documented() throws -> [(module: String, imports: Set<String>)] {
        let page = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        guard let start = page.range(of: "## Modules") else { return [] }
        let section = page[start.upperBound...]
        var rows: [(String, Set<String>)] = []
        var inTable = false
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("| `") else {
                if inTable && !line.hasPrefix("|") { break }
                continue
            }
            inTable = true
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else { continue }
            let module = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let said = cells[3]
            guard relinkModules.contains(module) else { continue }  // `relinkd`, `relinkctl`: as their targets say
            let named = Set(said.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
            if said.hasPrefix("all of the above but") {
                rows.append((module, Set(rows.map(\.0)).subtracting(named)))
            } else if said.hasPrefix("none") {
                rows.append((module, []))
            } else {
                rows.append((module, named))
            }
        }
        return rows
    }

    /// The relink modules the files of `module` import (C modules left out:
    /// the page names them in prose, and the compiler holds them to the
    /// targets' dependencies).
    static func imports(of module: String) throws -> Set<String> {
        var found: Set<String> = []
        let pattern = try NSRegularExpression(pattern: #"^\s*(?:@testable\s+)?(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(\w+)"#,
                                              options: .anchorsMatchLines)
        for file in SourceLayoutTests.swiftFiles(under: SourceLayoutTests.sources.appendingPathComponent(module)) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = Range(match.range(at: 1), in: text) else { continue }
                found.insert(String(text[range]))
            }
        }
        return found.intersection(relinkModules).subtracting(["CDBus", "CSystemd"])
    }

    /// Modules of `Sources/` the table leaves to their targets: executables and test tools.
    static let notInTheTable: Set<String> = ["relinkd", "relinkctl", "BenchSupport", "RelinkStoreTorture", "relink-store-torture", "relink-systemd-probe"]

    @Test func everyModuleImportsExactlyWhatThePageSays() throws {
        let rows = try Self.documented()
        #expect(rows.count >= 10, "the module table was not found or not read: \(rows.map(\.module))")
        // A new module is on the page (and in ``relinkModules``) or said to be left out.
        let directories = try FileManager.default.contentsOfDirectory(atPath: SourceLayoutTests.sources.path)
        for module in directories.sorted() where !Self.notInTheTable.contains(module) {
            #expect(rows.contains { $0.module == module } || ["CDBus", "CSystemd"].contains(module),
                    "Sources/\(module) is not in docs/architecture.md's module table")
        }
        for (module, documented) in rows {
            let actual = try Self.imports(of: module)
            #expect(actual == documented, "\(module) imports \(actual.sorted()), docs/architecture.md says \(documented.sorted())")
        }
    }

    /// The rules the page states in prose under the table.
    @Test func neitherBlueZNorTheClientImportsTheCoreAndTheCoreImportsNoCModule() throws {
        #expect(!(try Self.imports(of: "BlueZ")).contains("Restoration"))
        #expect(!(try Self.imports(of: "RelinkClient")).contains("Restoration"))
        #expect(!(try Self.imports(of: "RelinkClient")).contains("RelinkDaemon"))
        #expect(try Self.imports(of: "DaemonCore").isSubset(of: ["RelinkModel", "Restoration"]), "the daemon core imports the model and the restoration core only")
        for module in ["Restoration", "RelinkModel", "DaemonCore"] {
            for file in SourceLayoutTests.swiftFiles(under: SourceLayoutTests.sources.appendingPathComponent(module)) {
                let text = try String(contentsOf: file, encoding: .utf8)
                #expect(!text.contains("import CDBus") && !text.contains("import CSystemd") && !text.contains("import DBus"),
                        "\(file.lastPathComponent) of the core imports I/O")
            }
        }
    }
}
