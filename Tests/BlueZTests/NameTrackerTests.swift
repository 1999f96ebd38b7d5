import Foundation
import Testing
@testable import BlueZ
import RelinkModel

@Suite struct NameTrackerTests {
    let t0 = Date(timeIntervalSince1970: 1_000)
    let t1 = Date(timeIntervalSince1970: 2_000)

    @Test func nameWhileDisconnectedIsAdvertisingName() {
        var tracker = NameTracker()
        let change = tracker.nameSeen("RLK-7F3A", at: t0)
        #expect(change == NameChange(source: .advertising, previous: nil, current: "RLK-7F3A"))
        #expect(tracker.names.advertisingName == "RLK-7F3A")
        #expect(tracker.names.advertisingNameSeen == t0)
        #expect(tracker.names.gapName == nil)
    }

    @Test func nameChangeAfterConnectIsGAPName() {
        var tracker = NameTracker()
        _ = tracker.nameSeen("RLK-7F3A", at: t0)
        tracker.connectedChanged(true)
        let change = tracker.nameSeen("Front Door", at: t1)
        #expect(change == NameChange(source: .gap, previous: nil, current: "Front Door"))
        #expect(tracker.names.advertisingName == "RLK-7F3A")
        #expect(tracker.names.gapName == "Front Door")
        #expect(tracker.names.gapNameSource == .nameAfterConnect)
    }

    @Test func renameAdvertisedAfterDisconnectKeepsGAPName() {
        var tracker = NameTracker()
        tracker.connectedChanged(true)
        _ = tracker.nameSeen("Front Door", at: t0)
        tracker.connectedChanged(false)
        let change = tracker.nameSeen("RLK-NEW", at: t1)
        #expect(change?.source == .advertising)
        #expect(tracker.names.gapName == "Front Door")
        #expect(tracker.names.advertisingName == "RLK-NEW")
    }

    @Test func exportedCharacteristicWinsAndLaterAdvertisementWhileConnectedIsAdvertising() {
        var tracker = NameTracker()
        tracker.connectedChanged(true)
        #expect(tracker.gapCharacteristicRead(Array("Front Door".utf8), at: t0)?.source == .gap)
        // BlueZ's GAP plugin writes the same name into Name: no change.
        #expect(tracker.nameSeen("Front Door", at: t0) == nil)
        #expect(tracker.names.gapNameSource == .characteristic)
        // A different Name while connected, once the characteristic is known,
        // can only come from an advertisement.
        let change = tracker.nameSeen("RLK-7F3A", at: t1)
        #expect(change == NameChange(source: .advertising, previous: nil, current: "RLK-7F3A"))
        #expect(tracker.names.gapName == "Front Door")
    }

    @Test func sameNameAgainIsNoChangeButUpdatesSeen() {
        var tracker = NameTracker()
        _ = tracker.nameSeen("A", at: t0)
        #expect(tracker.nameSeen("A", at: t1) == nil)
        #expect(tracker.names.advertisingNameSeen == t1)
    }

    @Test func invalidUTF8IsReplacedNotDropped() {
        var tracker = NameTracker()
        let change = tracker.gapCharacteristicRead([0x46, 0xFF, 0x44], at: t0)
        #expect(change?.current == "F\u{FFFD}D")
    }
}
