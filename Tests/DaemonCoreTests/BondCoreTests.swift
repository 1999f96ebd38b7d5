import DaemonCore
import RelinkModel
import Restoration
import Testing

/// The bond watch's decisions (DaemonCore+Bonds.swift) as tables.
@Suite struct BondCoreTests {
    typealias Core = DaemonCore<ManualClock>

    static let lock = DaemonCoreTests.lock
    static func names(_ effects: [Core.Effect]) -> [String] { DaemonCoreTests.names(effects) }

    /// A bond seen is noted; one that goes is told once to each identifier
    /// with an intent on the peripheral, sorted; an unbonded device never
    /// bonded is no news; a bond relinkd removed itself is not told.
    @Test func aBondThatGoesIsToldOnceToEachIntentsIdentifier() throws {
        let a = ConnectionIntentID(identifier: try DaemonCoreTests.identifier("a.lock"), peripheral: Self.lock)
        let b = ConnectionIntentID(identifier: try DaemonCoreTests.identifier("b.lock"), peripheral: Self.lock)
        var core = try DaemonCoreTests.core([b, a])
        let table: [(Core.Input, [String])] = [
            (.bondObserved(Self.lock, bonded: false), []),
            (.bondObserved(Self.lock, bonded: true), ["note lock bonded true"]),
            (.bondObserved(Self.lock, bonded: true), ["note lock bonded true"]),
            (.bondObserved(Self.lock, bonded: false), ["note lock bonded false", #"bond removed lock to ["a.lock", "b.lock"]"#]),
            (.bondObserved(Self.lock, bonded: false), []),
            (.bondObserved(Self.lock, bonded: true), ["note lock bonded true"]),
            (.bondForgotten(Self.lock), []),
            (.bondObserved(Self.lock, bonded: false), []),
        ]
        for (input, expected) in table { #expect(Self.names(core.handle(input)) == expected, "\(input)") }
        #expect(!core.isBonded(Self.lock))
    }

    /// At start-up: bonded now is watched without news; stored bonded and
    /// seen unbonded was removed while relinkd was away (told now); stored
    /// bonded with no device is watched and told when it shows up unpaired;
    /// neither is not watched.
    @Test func startUpTellsABondRemovedWhileRelinkdWasAway() throws {
        let others = (0..<3).map { _ in PeripheralID() }
        var core = try DaemonCoreTests.core([ConnectionIntentID(identifier: try DaemonCoreTests.identifier("a.lock"), peripheral: Self.lock)])
        let found: [Core.BondAtStart] = [
            .init(peripheral: others[0], bondedNow: true, storedBonded: false),
            .init(peripheral: Self.lock, bondedNow: false, storedBonded: true),
            .init(peripheral: others[1], bondedNow: nil, storedBonded: true),
            .init(peripheral: others[2], bondedNow: false, storedBonded: false),
        ]
        #expect(Self.names(core.handle(.bondsAtStart(found))) == ["note lock bonded false", #"bond removed lock to ["a.lock"]"#])
        #expect(core.isBonded(others[0]) && core.isBonded(others[1]) && !core.isBonded(others[2]) && !core.isBonded(Self.lock))
        #expect(Self.names(core.handle(.bondObserved(others[1], bonded: false))) == ["note other bonded false", "bond removed other to []"])
    }

    /// A device's `Paired` or `Bonded` change is seen in bus order: the
    /// signal's `true` is a bond even when the device shows unbonded by the
    /// time the change is handled (bluetoothd removed it at once after the
    /// pairing), so the removal that follows is told; a `Connected` change
    /// reads the device's state.
    @Test func aSignalledBondCountsEvenWhenTheDeviceHasMovedOn() throws {
        var core = try DaemonCoreTests.core([ConnectionIntentID(identifier: try DaemonCoreTests.identifier("a.lock"), peripheral: Self.lock)])
        let address = try DaemonCoreTests.lockAddress()
        func change(_ property: Core.DeviceProperty, _ value: Bool, bonded: Bool) -> Core.Input {
            .deviceChanged(.init(peripheral: Self.lock, address: address, property: property, newValue: value, connected: true, bonded: bonded))
        }
        let table: [(Core.Input, [String])] = [
            (change(.connected, true, bonded: false), ["seen", "write streams", "transfers", #"feed ["a.lock"] deviceConnected(\#(address))"#]),
            (change(.paired, true, bonded: false), ["properties", "note lock bonded true", "paired by bluetoothd"]),
            (change(.bonded, true, bonded: false), ["properties", "note lock bonded true"]),
            (.bondObserved(Self.lock, bonded: false), ["note lock bonded false", #"bond removed lock to ["a.lock"]"#]),
            (change(.connected, true, bonded: true), ["seen", "note lock bonded true", "write streams", "transfers", #"feed ["a.lock"] deviceConnected(\#(address))"#]),
            (change(.paired, false, bonded: false), ["properties", "note lock bonded false", #"bond removed lock to ["a.lock"]"#]),
        ]
        for (input, expected) in table { #expect(Self.names(core.handle(input)) == expected, "\(input)") }
    }
}
