import Foundation
import RelinkAPI
import RelinkModel
import Testing

/// The contract module and `docs/api/` must say the same: every error the
/// enum has is documented and the reverse, and every method's page section
/// says which errors it can give, naming only errors that exist.
@Suite("API contract against docs/api")
struct ContractDocsTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/api")

    static func page(_ name: String) throws -> String {
        try String(contentsOf: docs.appendingPathComponent(name), encoding: .utf8)
    }

    /// The `org.relink.Error.*` names in the first column of errors.md's table.
    static func documentedErrors() throws -> [String] {
        try page("errors.md").split(separator: "\n").compactMap { line in
            guard line.hasPrefix("| `org.relink.Error.") else { return nil }
            return line.split(separator: "`").dropFirst().first.map(String.init)
        }
    }

    @Test func errorsMdListsExactlyTheErrorEnum() throws {
        let documented = try Self.documentedErrors()
        #expect(documented == RelinkErrorName.methodErrors.map(\.rawValue), "errors.md and RelinkErrorName.methodErrors differ")
    }

    /// The method sections (`### \`Name(`) of a page, by method name.
    static func methodSections(_ text: String) -> [String: String] {
        var sections: [String: String] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { current = nil }
            if line.hasPrefix("### `"), let open = line.firstIndex(of: "(") {
                current = String(line[line.index(line.startIndex, offsetBy: 5)..<open])
                if let current { sections[current] = "" }
                continue
            }
            if let current { sections[current, default: ""] += line + "\n" }
        }
        return sections
    }

    @Test(arguments: [("Manager1.md", Manager1Member.allCases.map(\.rawValue)),
                      ("Central1.md", Central1Member.allCases.filter { $0 != .event }.map(\.rawValue)),
                      ("PeripheralManager1.md", PeripheralManager1Member.allCases.map(\.rawValue))])
    func everyMethodIsDocumentedWithItsErrors(page: String, methods: [String]) throws {
        let sections = Self.methodSections(try Self.page(page))
        let known = Set(RelinkErrorName.methodErrors.map { String($0.rawValue.dropFirst("org.relink.Error.".count)) })
        for method in methods {
            let section = try #require(sections[method], "\(page) has no section for \(method)")
            #expect(section.contains("rrors"), "\(page): \(method) does not say which errors it gives")
            // Every error-like name (`CamelCase` in backticks after "rrors") must exist.
            guard let start = section.range(of: "rrors") else { continue }
            let tail = section[start.upperBound...]
            for token in tail.split(separator: "`").enumerated().filter({ $0.offset % 2 == 1 }).map({ String($0.element) })
            where token.first?.isUppercase == true && token.allSatisfy({ $0.isLetter }) && known.contains(token) == false
                && ["Register", "Connect", "Read", "Write", "Cancel", "Subscribe", "LastSequence", "Watch", "EventLimit", "Trusted", "Disconnect"].contains(token) == false {
                Issue.record("\(page): \(method) names an error \(token) that RelinkError has not")
            }
        }
        #expect(Set(sections.keys).isSuperset(of: methods))
    }

    @Test func everyDocumentedMethodExists() throws {
        let manager = Set(Self.methodSections(try Self.page("Manager1.md")).keys)
        let central = Set(Self.methodSections(try Self.page("Central1.md")).keys)
        #expect(manager == Set(Manager1Member.allCases.map(\.rawValue)))
        #expect(central == Set(Central1Member.allCases.map(\.rawValue)), "methods and the Event signal")
    }

    @Test func codesRoundTripThroughTheirNames() {
        for code in RelinkErrorName.methodErrors {
            #expect(RelinkErrorName(methodErrorNamed: code.rawValue) == code)
            #expect(RelinkError(code, "m").code == code)
            #expect(RelinkError(code, "m").dbusError.name.rawValue == code.rawValue)
        }
        let eventOnly = RelinkErrorName.allCases.filter { !$0.isMethodError }
        #expect(eventOnly.contains(.timeout) && !eventOnly.contains(.failed))
        for name in eventOnly {
            #expect(RelinkErrorName(methodErrorNamed: name.rawValue) == nil, "\(name) is an event failure name, not a method error")
        }
    }
}
