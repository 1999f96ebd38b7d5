import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// Per-user bounds (issue 39 item 3, docs/api/errors.md#per-user-bounds):
/// one user fills their bounds, each call past one is `QuotaExceeded`
/// naming it, with nothing changed; another user's events are still
/// stored; root is not bounded; root's `Status` shows each user's use.
@Suite("Daemon in-process: per-user bounds")
struct QuotaTests {
    typealias T = RestoreCycleTests
    static let alice = APICaller(name: ":1.30", uid: 1000)
    static let mallory = APICaller(name: ":1.31", uid: 1001)
    static let root = APICaller(name: ":1.32", uid: 0)
    static let bounds = UserBounds(limits: [.identifiers: 2, .intents: 1, .subscriptions: 1, .publishedServices: 1,
                                            .transferBytes: 1000, .storedEvents: 2000])

    static func id(_ name: String) -> RestoreIdentifier { (try? RestoreIdentifier(name)) ?? { fatalError("valid") }() }

    /// The error of `call`, nil when it succeeded.
    static func failure(_ d: InProcessDaemon, _ request: APIRequest, as caller: APICaller) async -> RelinkError? {
        if case .failure(let error) = await d.daemon.submit(request, from: caller) { return error }
        return nil
    }

    @Test func oneUserAtTheirBoundsIsRefusedAndAnotherUsersEventsAreStillStored() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory(), bounds: Self.bounds)
        // alice: her band, subscribed.
        try await d.api(.register(T.id, nameRule: nil, replay: false, eventLimit: nil), as: Self.alice)
        try await d.api(.connect(T.id, .address(T.band), try T.options()), as: Self.alice)
        try await d.api(.subscribe(T.id, .address(T.band), T.key), as: Self.alice)
        try await eventually("alice's band connected") { await d.state(T.id, T.band) == "connected" }

        // mallory fills every bound.
        let m1 = Self.id("m1"), m2 = Self.id("m2"), m3 = Self.id("m3")
        try await d.api(.register(m1, nameRule: nil, replay: false, eventLimit: nil), as: Self.mallory)
        try await d.api(.register(m2, nameRule: nil, replay: false, eventLimit: nil), as: Self.mallory)
        try await d.api(.connect(m1, .address(T.address(7)), try T.options()), as: Self.mallory)
        try await d.api(.subscribe(m1, .address(T.address(7)), T.key), as: Self.mallory)
        let before = await d.daemon.quotaLedger.uses(), identifiers = await d.daemon.core.identifiers
        let refusals: [(APIRequest, QuotaBound)] = [
            (.register(m3, nameRule: nil, replay: false, eventLimit: nil), .identifiers),
            (.connect(m2, .address(T.address(8)), try T.options()), .intents),
            (.subscribe(m1, .address(T.address(7)), CharacteristicKey(service: T.heartRate, characteristic: T.heartRate)), .subscriptions),
            (.register(m1, nameRule: nil, replay: false, eventLimit: 1001), .storedEvents),
            (.transfer(m1, .start(.address(T.address(7)), T.key, data: [UInt8](repeating: 1, count: 1001), withResponse: true, resume: false, chunkSize: nil)),
             .transferBytes),
        ]
        for (request, bound) in refusals {
            let error = await Self.failure(d, request, as: Self.mallory)
            #expect(error?.code == .quotaExceeded, "\(request): \(String(describing: error))")
            #expect(error?.message.contains("bound of \(bound)") == true, "\(String(describing: error))")
        }
        #expect(await d.daemon.quotaLedger.uses() == before, "a refused call changes nothing")
        #expect(await d.daemon.core.identifiers == identifiers)
        #expect(await d.daemon.api.outboxes[m1]?.limit == 1000)

        // alice's values are still stored, and alice may still add within her own bounds.
        for n: UInt8 in 1...5 { await fake.push(T.band, service: T.heartRate, characteristic: T.measurement, [0, 90, n]) }
        try await eventually("alice's values stored") { T.values(try await d.events(T.id)).contains([0, 90, 5]) }
        try await d.api(.register(Self.id("alice2"), nameRule: nil, replay: false, eventLimit: nil), as: Self.alice)

        // root is bounded by the disk only, and sees each user's use against the bounds.
        for n in 1...3 { try await d.api(.register(Self.id("root\(n)"), nameRule: nil, replay: false, eventLimit: nil), as: Self.root) }
        let status = try #require(try JSONSerialization.jsonObject(with: Data(try await d.daemon.statusJSON(for: Self.root).utf8)) as? [String: Any])
        let quotas = try #require(status["quotas"] as? [String: Any])
        #expect((quotas["bounds"] as? [String: Any])?["identifiers"] as? Int == 2)
        let users = try #require(quotas["users"] as? [[String: Any]])
        let malloryUse = try #require(users.first { $0["uid"] as? Int == 1001 }?["use"] as? [String: Any])
        #expect(malloryUse["identifiers"] as? Int == 2 && malloryUse["intents"] as? Int == 1 && malloryUse["subscriptions"] as? Int == 1)
        #expect(malloryUse["storedEvents"] as? Int == 2000)
        #expect(users.first { $0["uid"] as? Int == 0 }?["use"].flatMap { ($0 as? [String: Any])?["identifiers"] as? Int } == 3)
        // A user's own Status does not show the bounds' table.
        #expect(!(try await d.daemon.statusJSON(for: Self.mallory)).contains("\"quotas\""))
        await d.stop()
    }
}
