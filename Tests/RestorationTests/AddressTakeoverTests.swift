import RelinkModel
import Restoration
import Testing

@Suite("Address take-over")
struct AddressTakeoverTests {
    let lock = PeripheralID(), scanned = PeripheralID()

    @Test func aFreeOrOwnAddressIsTaken() {
        #expect(AddressTakeover.decide(claimant: lock, holder: nil, holderIsWanted: false) == .take)
        #expect(AddressTakeover.decide(claimant: lock, holder: lock, holderIsWanted: true) == .take)
    }

    @Test func aPeripheralOnlyAScanMetIsRetired() {
        #expect(AddressTakeover.decide(claimant: lock, holder: scanned, holderIsWanted: false) == .takeRetiring(scanned))
    }

    @Test func aWantedPeripheralKeepsItsAddress() {
        #expect(AddressTakeover.decide(claimant: lock, holder: scanned, holderIsWanted: true) == .keep(holder: scanned))
    }
}
