import RelinkModel
import Testing

/// The per-user bounds' decision (issue 39 item 3) as a pure function over
/// a user's use, what a call adds and the bounds, and the configuration
/// file's syntax.
@Suite struct UserBoundsTests {
    static let small = UserBounds(limits: [.identifiers: 2, .intents: 1, .subscriptions: 3, .publishedServices: 1,
                                           .transferBytes: 100, .storedEvents: 2000])

    @Test(arguments: [
        // (use, adding, uid, the bound refused or nil)
        (QuotaUse([.identifiers: 1]), QuotaUse([.identifiers: 1]), UInt32(1000), QuotaBound?.none),
        (QuotaUse([.identifiers: 2]), QuotaUse([.identifiers: 1]), 1000, .identifiers),
        (QuotaUse([.identifiers: 2]), QuotaUse([.identifiers: 1]), 0, nil),  // root: the disk only
        (QuotaUse([.identifiers: 5]), QuotaUse([.intents: 1]), 1000, nil),  // over a lowered bound: what does not grow it passes
        (QuotaUse([.intents: 1]), QuotaUse([.intents: 1]), 1000, .intents),
        (QuotaUse([.subscriptions: 2]), QuotaUse([.subscriptions: 1]), 1000, nil),
        (QuotaUse([.subscriptions: 3]), QuotaUse([.subscriptions: 1]), 1000, .subscriptions),
        (QuotaUse([.publishedServices: 1]), QuotaUse([.publishedServices: 1]), 1000, .publishedServices),
        (QuotaUse([.transferBytes: 60]), QuotaUse([.transferBytes: 40]), 1000, nil),
        (QuotaUse([.transferBytes: 60]), QuotaUse([.transferBytes: 41]), 1000, .transferBytes),
        (QuotaUse([.identifiers: 1, .storedEvents: 1000]), QuotaUse([.identifiers: 1, .storedEvents: 1001]), 1000, .storedEvents),
        (QuotaUse(), QuotaUse(), 1000, nil),
    ])
    func theFirstBoundACallWouldPass(use: QuotaUse, adding: QuotaUse, uid: UInt32, refused: QuotaBound?) {
        #expect(Self.small.exceeded(by: adding, use: use, uid: uid) == refused)
    }

    @Test func theDefaultsLetOneUserKeepAGatewaysWorthAndNoMore() {
        let d = UserBounds.defaults
        #expect(d[.identifiers] == 64 && d[.intents] == 256 && d[.subscriptions] == 1024 && d[.publishedServices] == 64)
        #expect(d[.transferBytes] == 64 << 20 && d[.storedEvents] == 64_000)
        // Every identifier a user may have, at the default EventLimit (1000), fits the stored-events bound.
        #expect(d[.identifiers] * 1000 <= d[.storedEvents])
    }

    @Test func aConfigurationFileSetsSomeBoundsAndLeavesTheDefaults() throws {
        let bounds = try UserBounds.parse(config: """
            # per-user bounds
            max-identifiers = 8
              max-transfer-bytes = 2M   # two MiB

            max-stored-events=16000
            """)
        #expect(bounds[.identifiers] == 8 && bounds[.transferBytes] == 2 << 20 && bounds[.storedEvents] == 16000)
        #expect(bounds[.intents] == UserBounds.defaults[.intents])
        #expect(try UserBounds.parse(config: "") == UserBounds.defaults)
    }

    @Test(arguments: [
        ("max-identifier = 3", 1, "unknown setting max-identifier"),
        ("max-intents = 3\nmax-intents = 4", 2, "set twice"),
        ("max-intents = -1", 1, "whole number"),
        ("max-intents = 3M", 1, "whole number"),  // units only for bytes
        ("max-transfer-bytes = 99999999999G", 1, "whole number"),  // overflow
        ("\nmax-intents", 2, "expected name = value"),
    ])
    func aBadLineIsRefusedByItsNumber(text: String, line: Int, reason: String) {
        #expect {
            _ = try UserBounds.parse(config: text)
        } throws: { error in
            guard let error = error as? UserBounds.ConfigError else { return false }
            return error.line == line && error.reason.contains(reason)
        }
    }
}
