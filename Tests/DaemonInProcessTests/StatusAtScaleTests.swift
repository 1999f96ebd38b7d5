import BlueZFake
import Dispatch
import Foundation
@testable import RelinkDaemon
import RelinkModel
import Restoration
import Synchronization
import Testing

/// `Status` and the watchdog's liveness probe with many identifiers and
/// intents (issue 21, item 1: one Status read of 1,000 identifiers and 5,000
/// intents held the loop for 17-25 s, and the watchdog with it). The shape
/// at a size a unit test can afford: what matters is where the work runs,
/// which the tests assert, not how long it takes (that is
/// bench/relink/scale_bench.py's).
@Suite("Daemon in-process: Status at scale")
struct StatusAtScaleTests {
    static let service = BluetoothUUID(shortValue: 0x180D)
    static let characteristic = BluetoothUUID(shortValue: 0x2A37)

    static func identifier(_ n: Int) -> RestoreIdentifier {
        (try? RestoreIdentifier(String(format: "scale-%03d", n))) ?? { fatalError("valid") }()
    }

    /// The n-th address no fake peripheral has.
    static func absent(_ n: Int) -> BluetoothAddress {
        (try? BluetoothAddress(octets: [0x10, 0, 0, 0, UInt8(n >> 8), UInt8(n & 0xFF)])) ?? { fatalError("six octets") }()
    }

    /// An outcome several tasks see (nil: not yet).
    final class Outcome: Sendable {
        private let state = Mutex<Bool?>(nil)
        var value: Bool? { state.withLock { $0 } }
        func set(_ value: Bool) { state.withLock { $0 = value } }
        /// True for the one caller that finds it unset (and sets it false).
        func claimFirst() -> Bool {
            state.withLock { state in
                defer { if state == nil { state = false } }
                return state == nil
            }
        }
    }

    /// `identifiers` identifiers with `per` pending intents each (to absent
    /// peripherals), and one subscription on the first intent of each.
    static func populated(identifiers: Int, per: Int) async throws -> InProcessDaemon {
        let d = try await InProcessDaemon(fake: FakeBlueZ(), directory: try InProcessDaemon.temporaryDirectory())
        let options = try ConnectionOptions(strategies: Strategy.defaultOrder, deadline: .pendingUntilCancelled, services: [service])
        for i in 0..<identifiers {
            try await d.submit(.register(identifier(i), uid: UInt32(1000 + i % 2)))
            for k in 0..<per { try await d.submit(.connect(identifier(i), absent(i * per + k), options)) }
            try await d.submit(.subscribe(identifier(i), absent(i * per), CharacteristicKey(service: service, characteristic: characteristic)))
        }
        return d
    }

    /// While the Status document is being made, the loop answers the
    /// liveness probe: the document is made off the loop, from a snapshot.
    /// `visible` (run while the document is made) asks the probe and waits
    /// for its answer. Made on the loop, as before, the probe could not be
    /// answered until the document was done: the wait would run out.
    /// (`visible` blocks its thread on purpose; the probe's task and the
    /// loop run on another thread of the global pool.)
    @Test func theLoopAnswersTheLivenessProbeWhileStatusIsMade() async throws {
        let d = try await Self.populated(identifiers: 20, per: 3)
        let probe = d.daemon.livenessProbe
        let answeredDuringStatus = Outcome()
        let json = try await d.daemon.statusJSON(visible: { _ in
            guard answeredDuringStatus.claimFirst() else { return true }
            let answered = DispatchSemaphore(value: 0)
            Task.detached {
                if await probe.check() { answeredDuringStatus.set(true) }
                answered.signal()
            }
            _ = answered.wait(timeout: .now() + 10)
            return true
        })
        #expect(answeredDuringStatus.value == true, "the probe was answered while Status was being made")
        let status = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect((status["identifiers"] as? [[String: Any]])?.count == 20)
        await d.stop()
    }

    /// The probe keeps LivenessProbe's contract: cancelled, it returns
    /// false at once although the loop is not answering (stalled here; at
    /// start-up, not started yet). A probe that waited for the loop held
    /// the watchdog, and so relinkd's graceful shutdown, for as long.
    @Test func theLivenessProbeReturnsAtOnceWhenCancelledWhileTheLoopIsStalled() async throws {
        let d = try await InProcessDaemon(fake: FakeBlueZ(), directory: try InProcessDaemon.temporaryDirectory())
        #expect(await d.daemon.livenessProbe.check(), "the probe succeeds while the loop runs")
        d.daemon.stallForTesting(.seconds(120))
        let probe = d.daemon.livenessProbe
        let check = Task { await probe.check() }
        let returned = Outcome()
        Task { returned.set(await check.value) }
        check.cancel()
        try await eventually("the cancelled probe to return", within: .seconds(10)) { returned.value != nil }
        #expect(returned.value == false, "a cancelled probe reports failure")
        await d.stop()
    }

    /// The document made off the loop is the one the loop's state gives:
    /// every identifier with its own intents (sorted), its subscriptions
    /// counted, and only what the caller may see.
    @Test func statusListsEachIdentifiersOwnIntentsAndOnlyWhatTheCallerMaySee() async throws {
        let d = try await Self.populated(identifiers: 6, per: 4)
        let all = try #require(try JSONSerialization.jsonObject(with: Data(try await d.daemon.statusJSON().utf8)) as? [String: Any])
        let entries = try #require(all["identifiers"] as? [[String: Any]])
        #expect(entries.compactMap { $0["id"] as? String } == (0..<6).map { Self.identifier($0).rawValue })
        for (i, entry) in entries.enumerated() {
            let connections = entry["connections"] as? [[String: Any]] ?? []
            let addresses = Set(connections.compactMap { $0["address"] as? String })
            #expect(addresses == Set((0..<4).map { Self.absent(i * 4 + $0).string }), "\(entry)")
            #expect(entry["subscriptions"] as? Int == 1, "\(entry)")
        }
        let user = try #require(try JSONSerialization.jsonObject(
            with: Data(try await d.daemon.statusJSON(for: APICaller(name: ":1.9", uid: 1001)).utf8)) as? [String: Any])
        let visible = (user["identifiers"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(visible == [1, 3, 5].map { Self.identifier($0).rawValue }, "uid 1001 sees its own identifiers only")
        await d.stop()
    }
}
