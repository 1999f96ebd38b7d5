import Foundation
import Testing
@testable import Restoration
import RelinkModel

@Suite("Name resolution")
struct NameResolutionTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func advertisingNameUntilTheGAPNameIsKnown() throws {
        var names = PeripheralNames()
        #expect(names.resolved() == nil, "no name yet: the caller shows the address")
        let firstRaw = names.sawAdvertisingName("Lock-1234", at: t0)
        let first = try #require(firstRaw)
        #expect(first == NameChange(source: .advertising, previous: nil, current: "Lock-1234"))
        #expect(names.resolved() == ResolvedName(name: "Lock-1234", source: .advertising, reason: .noGAPNameYet))
        _ = names.sawGAPName("Front Door", at: t0 + 5)
        #expect(names.resolved() == ResolvedName(name: "Front Door", source: .gap, reason: .gapNameKnown))
    }

    @Test func gapNameStaysResolvedAfterAnAdvertisedRename() throws {
        var names = PeripheralNames()
        _ = names.sawGAPName("Front Door", at: t0)
        let renameRaw = names.sawAdvertisingName("Back Door", at: t0 + 60)
        let rename = try #require(renameRaw)
        #expect(rename.source == .advertising && rename.current == "Back Door")
        let update = names.update(for: rename, preferring: .gapName)
        #expect(update.resolved?.name == "Front Door", "as iOS: the cached GAP name wins")
        #expect(!update.changesResolvedName)
        #expect(update.names.advertising?.value == "Back Door", "the fresh name is still available")
    }

    @Test func advertisingPreferenceFollowsRenames() throws {
        var names = PeripheralNames()
        _ = names.sawGAPName("Front Door", at: t0)
        #expect(names.resolved(preferring: .advertisingName) == ResolvedName(name: "Front Door", source: .gap, reason: .noAdvertisingNameYet))
        let renameRaw = names.sawAdvertisingName("Back Door", at: t0 + 1)
        let rename = try #require(renameRaw)
        let update = names.update(for: rename, preferring: .advertisingName)
        #expect(update.resolved == ResolvedName(name: "Back Door", source: .advertising, reason: .advertisingNamePreferred))
        #expect(update.changesResolvedName)
    }

    @Test func seeingTheSameNameAgainOnlyRefreshesItsTime() throws {
        var names = PeripheralNames()
        _ = names.sawAdvertisingName("Lock", at: t0)
        #expect(names.sawAdvertisingName("Lock", at: t0 + 30) == nil, "no event without a change")
        #expect(names.advertising?.seenAt == t0 + 30)
        #expect(names.sawAdvertisingName("Lock", at: t0 + 10) == nil)
        #expect(names.advertising?.seenAt == t0 + 30, "an older report does not move the time back")
        let gapChangeRaw = names.sawGAPName("Lock", at: t0 + 40)
        let gapChange = try #require(gapChangeRaw)
        #expect(gapChange.source == .gap, "the GAP name is its own slot even with the same text")
        let renamedRaw = names.sawGAPName("Garage", at: t0 + 50)
        let renamed = try #require(renamedRaw)
        #expect(renamed == NameChange(source: .gap, previous: "Lock", current: "Garage"))
    }
}
