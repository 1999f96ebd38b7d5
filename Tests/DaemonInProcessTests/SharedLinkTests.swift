import BlueZ
import BlueZFake
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Testing

/// Two identifiers on one peripheral: the first owns the link, the second
/// shares it (issue 21, item 8). CoreBluetooth calls `didConnect` at once
/// for a peripheral that is already connected; a sharer must hear it too,
/// and after a relinkd restart every identifier on the link is `restored`.
@Suite("Daemon in-process: a link shared by two identifiers")
struct SharedLinkTests {
    typealias T = RestoreCycleTests
    static let second = (try? RestoreIdentifier("second")) ?? { fatalError("valid") }()

    /// The identifier's events of `kind` with their route.
    static func routes(_ kind: String, _ events: [(kind: String, payload: RelinkEvent?)]) -> [ConnectRoute] {
        events.compactMap { event in
            switch event.payload {
            case .connected(_, _, let route, _)? where kind == "connected": route
            case .restored(_, _, let route, _)? where kind == "restored": route
            default: nil
            }
        }
    }

    /// The identifier's events about its link, in order (names left out).
    static func linkEvents(_ d: InProcessDaemon, _ id: RestoreIdentifier) async throws -> [String] {
        try await d.events(id).map(\.kind).filter { ["connected", "restored", "disconnected", "failed-to-connect"].contains($0) }
    }

    /// The owner linked, then a second identifier connects to the same peripheral.
    static func shared(_ d: InProcessDaemon, strategies: [Strategy] = Strategy.defaultOrder) async throws {
        try await T.linked(d, strategies: strategies)
        try await d.submit(.register(Self.second, uid: 0))
        try await d.submit(.connect(Self.second, T.band, try T.options(strategies)))
    }

    /// A first daemon on a fresh store: the owner linked, the second
    /// identifier sharing (it heard `connected`); then the daemon stopped,
    /// BlueZ's link kept. Returns the fake and the store's directory.
    static func sharedThenStopped(strategies: [Strategy] = Strategy.defaultOrder) async throws -> (FakeBlueZ, String) {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        try await Self.shared(first, strategies: strategies)
        try await eventually("the second identifier hears connected", ) {
            Self.routes("connected", try await first.events(Self.second)).count == 1
        }
        await first.stop()
        return (fake, directory)
    }

    @Test func aSecondIdentifierOnAnAlreadyConnectedLinkHearsConnected() async throws {
        let fake = FakeBlueZ()
        await fake.add(T.bandPeripheral(), known: true)
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        try await Self.shared(d)
        try await eventually("the second identifier hears connected", ) {
            Self.routes("connected", try await d.events(Self.second)) == [.sharedLink]
        }
        #expect(await d.state(Self.second, T.band) == "connected-shared")
        let connects = await fake.calls.filter { $0 == .connect(T.band.string) }.count
        #expect(connects == 1, "the sharer makes no Connect of its own")
        await d.stop()
    }

    @Test func afterARestartEveryIdentifierSharingTheLinkIsRestored() async throws {
        let (fake, directory) = try await Self.sharedThenStopped()
        #expect(await fake.isConnected(T.band), "BlueZ keeps the link across relinkd's restart")

        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("the owner restored") { try await second.events(T.id).contains { $0.kind == "restored" } }
        try await eventually("the sharer restored too", ) {
            Self.routes("restored", try await second.events(Self.second)) == [.sharedLink]
        }
        #expect(await second.state(Self.second, T.band) == "connected-shared")
        let kinds = try await Self.linkEvents(second, Self.second)
        #expect(kinds == ["connected", "restored"], "one event each, nothing else: \(kinds)")
        await second.stop()
    }

    @Test func aSharedLinkGoneDuringARestartIsReportedDownToEverySharer() async throws {
        // Known identifier only: the first round ends as soon as the Connect fails.
        let (fake, directory) = try await Self.sharedThenStopped(strategies: [.knownIdentifier])
        await fake.setInRange(T.band, false)  // the link drops while relinkd is away

        let second = try await InProcessDaemon(fake: fake, directory: directory)
        try await eventually("the owner reports the restored link down") {
            try await second.events(T.id).map(\.kind).contains("disconnected")
        }
        try await eventually("so does the sharer", ) {
            try await Self.linkEvents(second, Self.second) == ["connected", "disconnected"]
        }
        await fake.setInRange(T.band, true)
        try await eventually("both hear the link back", within: .seconds(20)) {
            let owner = try await second.events(T.id).map(\.kind), sharer = try await second.events(Self.second).map(\.kind)
            return owner.filter { $0 == "connected" }.count == 2 && sharer.filter { $0 == "connected" }.count == 2
        }
        #expect(try await Self.linkEvents(second, Self.second) == ["connected", "disconnected", "connected"])
        await second.stop()
    }
}
