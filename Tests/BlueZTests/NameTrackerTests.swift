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

    /// bluetoothd 5.66 hides the GAP service and reports advertisements
    /// received while connected (its background scan) in the same `Name`:
    /// relinkd labelled them GAP and the name flipped at every report and
    /// reconnection (issue 20 finding 5, the real-bluetoothd faults run).
    @Test func advertisementsWhileConnectedOnBlueZ566AreAdvertisingAndNothingFlips() {
        var tracker = NameTracker()
        #expect(tracker.nameSeen("HRM-2C41", at: t0)?.source == .advertising)
        tracker.connectedChanged(true)
        #expect(tracker.nameSeen("Wrist Band", at: t0) == NameChange(source: .gap, previous: nil, current: "Wrist Band"))
        // An advertisement while the link is up.
        #expect(tracker.nameSeen("HRM-2C41", at: t1) == nil, "the known advertising name, not a new GAP name")
        #expect(tracker.names.gapName == "Wrist Band" && tracker.names.advertisingName == "HRM-2C41")
        // Reconnections: an advertisement first, then the GAP plugin's read.
        for _ in 0..<3 {
            tracker.connectedChanged(false)
            tracker.connectedChanged(true)
            #expect(tracker.nameSeen("HRM-2C41", at: t1) == nil)
            #expect(tracker.nameSeen("Wrist Band", at: t1) == nil)
        }
        #expect(tracker.names.gapName == "Wrist Band" && tracker.names.advertisingName == "HRM-2C41")
        // A renamed advertisement while connected, once this connection's GAP name is known.
        #expect(tracker.nameSeen("HRM-NEW", at: t1) == NameChange(source: .advertising, previous: "HRM-2C41", current: "HRM-NEW"))
    }

    /// The CI faults run of session 11 on bluetoothd 5.66: at a
    /// reconnection the `Connected=true` signal did not come (issue 20
    /// finding 2), so the GAP name BlueZ wrote into `Name` as it connected
    /// was seen "while disconnected" and relabelled advertising; once
    /// `Connected` was known, the next advertisement received while
    /// connected was taken as the connection's first `Name` change and
    /// relabelled GAP. Each name flipped (relinkd.log of that run, lines
    /// 24, 35, 76 and 86).
    @Test func aNameKeepsItsSourceWhenConnectedIsNotSignalled() {
        var tracker = NameTracker()
        #expect(tracker.nameSeen("HRM-2C41", at: t0)?.source == .advertising)
        tracker.connectedChanged(true)
        #expect(tracker.nameSeen("Wrist Band", at: t0)?.source == .gap)
        tracker.connectedChanged(false)
        // Reconnected, but no Connected=true: BlueZ's GAP name again.
        #expect(tracker.nameSeen("Wrist Band", at: t1) == nil)
        tracker.connectedChanged(true)
        // An advertisement received while connected.
        #expect(tracker.nameSeen("HRM-2C41", at: t1) == nil)
        #expect(tracker.names.gapName == "Wrist Band")
        #expect(tracker.names.advertisingName == "HRM-2C41")
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
