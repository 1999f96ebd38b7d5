import DBus
import Foundation
import RelinkStore
import Restoration
import Testing
@testable import RelinkDaemon
import RelinkModel

/// The notify sessions relinkd believes bluetoothd holds for it, and the
/// values kept until a returning link is reported up.
@Suite struct HeldSessionsTests {
    let peripheral = PeripheralID()
    let key = CharacteristicKey(
        service: try! BluetoothUUID(parsing: "8e7f1a00-4b2c-4d1e-9a3f-72656c696e6b"),
        characteristic: try! BluetoothUUID(parsing: "8e7f1a01-4b2c-4d1e-9a3f-72656c696e6b"))
    let path = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02/service0001/char0002")
    let otherPath = try! ObjectPath("/org/bluez/hci0/dev_00_00_00_00_00_02/service0001/char0003")

    func request(_ n: Int) -> RestoreBatch.Request {
        RestoreBatch.Request(mutations: [.acknowledgeEvents(try! RestoreIdentifier("id\(n)"), through: Int64(n))])
    }

    func marks(_ requests: [RestoreBatch.Request]) -> [Int64] {
        requests.compactMap { r -> Int64? in
            if case .acknowledgeEvents(_, let n)? = r.mutations.first { return n }
            return nil
        }
    }

    @Test func aSessionIsHeldOnlyOnItsObjectUntilItEnds() {
        var held = HeldSessions()
        #expect(!held.holds(peripheral, key, on: path))
        held.started(peripheral, key, on: path)
        #expect(held.holds(peripheral, key, on: path))
        #expect(!held.holds(peripheral, key, on: otherPath), "another object (GATT rebuilt) has no session of ours")
        #expect(!held.holds(PeripheralID(), key, on: path))
        held.ended(peripheral, key)
        #expect(!held.holds(peripheral, key, on: path))
        held.started(peripheral, key, on: path)
        held.endAll()
        #expect(!held.holds(peripheral, key, on: path), "bluetoothd gone: every session ended")
    }

    @Test func aStartNotifyOutcomeIsJudgedAgainstTheLinkItWasIssuedOn() {
        var held = HeldSessions()
        let other = PeripheralID()
        let issued = held.issue(peripheral)
        #expect(held.sameLink(peripheral, since: issued) && held.sessionsLast(since: issued))
        held.linkDown(other)
        #expect(held.sameLink(peripheral, since: issued), "another peripheral's link does not matter")
        held.linkDown(peripheral)
        // The link went down (and maybe up again) meanwhile: a failure is
        // about a link that is gone, but a session outlives its link.
        #expect(!held.sameLink(peripheral, since: issued))
        #expect(held.sessionsLast(since: issued))
        let again = held.issue(peripheral)
        #expect(held.sameLink(peripheral, since: again))
        held.endAll()
        // bluetoothd went away: no session of either stamp stands.
        #expect(!held.sessionsLast(since: again) && !held.sameLink(peripheral, since: again))
    }

    @Test func keptValuesAreReleasedOnceInOrderAndDroppedWithTheLink() {
        var held = HeldSessions()
        let kept = [held.keep(request(1), for: peripheral), held.keep(request(2), for: peripheral)]
        #expect(kept == [true, true])
        let first = held.release(peripheral), second = held.release(peripheral)
        #expect(marks(first) == [1, 2])
        #expect(second.isEmpty, "released once")
        _ = held.keep(request(3), for: peripheral)
        held.linkDown(peripheral)
        let afterDrop = held.release(peripheral)
        #expect(afterDrop.isEmpty, "a link that went down again discards them")
    }

    @Test func atMostTheLimitIsKeptOldestDroppedFirst() {
        var held = HeldSessions()
        var accepted: [Bool] = []
        for n in 1...HeldSessions.limit + 1 { accepted.append(held.keep(request(n), for: peripheral)) }
        #expect(accepted == Array(repeating: true, count: HeldSessions.limit) + [false])
        let released = marks(held.release(peripheral))
        #expect(released.count == HeldSessions.limit)
        #expect(released.first == 2 && released.last == Int64(HeldSessions.limit + 1))
    }
}
