import Foundation
import RelinkModel
import Testing

/// systemd/relinkd.conf, installed as /etc/relink/relinkd.conf (the Debian
/// package's conffile): it sets nothing, and what it shows commented out
/// is what relinkd uses, so an operator who uncomments a line changes only
/// the value they edit.
@Suite struct ShippedConfigTests {
    static let path = TestPaths.packageRoot + "/systemd/relinkd.conf"

    @Test func theShippedFileSetsNothingAndShowsEveryDefault() throws {
        let text = try String(contentsOfFile: Self.path, encoding: .utf8)
        // As shipped: all comments, so relinkd runs with its defaults.
        #expect(try UserBounds.parse(config: text) == .defaults)
        // Every bound appears once as a commented-out setting.
        let settings = text.split(separator: "\n").filter { $0.hasPrefix("#max-") }
        #expect(Set(settings.compactMap { $0.dropFirst().split(separator: "=").first?.trimmingCharacters(in: .whitespaces) })
                == Set(QuotaBound.allCases.map { "max-\($0)" }), "\(settings)")
        #expect(settings.count == QuotaBound.allCases.count)
        // Uncommented, each shows the default itself (a stale number here
        // would change a bound for the operator who only uncomments it).
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("#max-") ? String($0.dropFirst()) : String($0) }.joined(separator: "\n")
        #expect(try UserBounds.parse(config: uncommented) == .defaults)
        let edited = uncommented.replacingOccurrences(of: "max-identifiers = 64", with: "max-identifiers = 7")
        #expect(try UserBounds.parse(config: edited)[.identifiers] == 7)
    }
}
