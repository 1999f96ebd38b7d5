public import RelinkModel
public import Restoration

// The bond watch (issue 24): which known peripherals bluetoothd has bonded,
// and a bond removed behind relinkd's back (`bluetoothctl remove`, or the
// peripheral's `Paired` gone false) told once to every identifier with an
// intent on it. relinkd does not pair again by itself: the intent's next
// operation that needs encryption pairs on demand, if the intent allows it.
extension DaemonCore {
    /// What bluetoothd showed of one known peripheral's bond at start-up.
    public struct BondAtStart: Sendable, Hashable {
        /// The peripheral.
        public var peripheral: PeripheralID
        /// Whether bluetoothd has it paired or bonded now; nil when it has no device for it.
        public var bondedNow: Bool?
        /// Whether one of its intents stored it as bonded (store v11).
        public var storedBonded: Bool

        /// One peripheral's bond as start-up found it.
        public init(peripheral: PeripheralID, bondedNow: Bool?, storedBonded: Bool) {
            self.peripheral = peripheral
            self.bondedNow = bondedNow
            self.storedBonded = storedBonded
        }
    }

    /// Whether bluetoothd has `peripheral` bonded, as the bond watch last saw it.
    public func isBonded(_ peripheral: PeripheralID) -> Bool { bonded.contains(peripheral) }

    /// bluetoothd shows the peripheral's device `bonded` (`Paired` or
    /// `Bonded`) or not: a bond is noted for its intents; a bond that was
    /// there and is gone is noted and told to each identifier with an intent on it.
    mutating func bondObserved(_ peripheral: PeripheralID, bonded isBonded: Bool) -> [Effect] {
        if isBonded {
            bonded.insert(peripheral)
            return [.noteBond(peripheral, bonded: true)]
        }
        guard bonded.remove(peripheral) != nil else { return [] }
        let identifiers = Set(intents(of: peripheral).map(\.identifier)).sorted()
        return [.noteBond(peripheral, bonded: false), .bondRemoved(peripheral, identifiers: identifiers)]
    }

    /// At start-up: a peripheral bonded now, or stored as bonded, is
    /// watched; one stored as bonded whose device is there unbonded lost
    /// its bond while relinkd was away, and is told now. A device absent
    /// is no news (it is told when it shows up again unpaired).
    mutating func bondsAtStart(_ found: [BondAtStart]) -> [Effect] {
        var effects: [Effect] = []
        for entry in found.sorted(by: { $0.peripheral < $1.peripheral }) {
            if entry.bondedNow == true {
                bonded.insert(entry.peripheral)
            } else if entry.storedBonded {
                bonded.insert(entry.peripheral)
                if let now = entry.bondedNow { effects += bondObserved(entry.peripheral, bonded: now) }
            }
        }
        return effects
    }

    /// relinkd removes the peripheral's bond itself (`Unpair`): no longer
    /// watched, so its removal is no `bond-removed` news.
    mutating func bondForgotten(_ peripheral: PeripheralID) -> [Effect] {
        bonded.remove(peripheral)
        return []
    }
}
