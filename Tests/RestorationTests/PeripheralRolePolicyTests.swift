import RelinkModel
import Restoration
import Testing

/// The peripheral role's pure decisions: who answers a read or a write,
/// the update window, pending requests.
@Suite("Peripheral role: request policy, update window, pending requests")
struct PeripheralRolePolicyTests {
    static let service = BluetoothUUID(shortValue: 0x180F)
    static let level = CharacteristicKey(service: service, characteristic: BluetoothUUID(shortValue: 0x2A19))
    static let model = CharacteristicKey(service: service, characteristic: BluetoothUUID(shortValue: 0x2A24))
    static let control = CharacteristicKey(service: service, characteristic: BluetoothUUID(shortValue: 0x2A6E))
    static var record: PeripheralManagerRecord {
        PeripheralManagerRecord(services: [PublishedService(uuid: service, characteristics: [
            PublishedCharacteristic(uuid: level.characteristic, properties: [.read, .notify], permissions: .readable, cacheable: true),
            PublishedCharacteristic(uuid: model.characteristic, properties: .read, permissions: .readable, value: [1, 2, 3]),
            PublishedCharacteristic(uuid: control.characteristic, properties: [.write, .writeWithoutResponse], permissions: .writeable),
        ])])
    }

    @Test func readsAreAnsweredByRelinkdOnlyFromStaticOrCachedValues() {
        var record = Self.record
        #expect(PeripheralRequestPolicy.read(Self.model, offset: 1, in: record, clientAttached: true) == .answer([2, 3]))
        #expect(PeripheralRequestPolicy.read(Self.model, offset: 4, in: record, clientAttached: false) == .refuse(.invalidOffset))
        #expect(PeripheralRequestPolicy.read(Self.level, offset: 0, in: record, clientAttached: true) == .forward)
        #expect(PeripheralRequestPolicy.read(Self.level, offset: 0, in: record, clientAttached: false) == .refuse(.unlikelyError))
        record.cachedValues[Self.level] = [9]
        #expect(PeripheralRequestPolicy.read(Self.level, offset: 0, in: record, clientAttached: false) == .answer([9]))
        #expect(PeripheralRequestPolicy.read(Self.level, offset: 0, in: record, clientAttached: true) == .forward, "the program's value is fresher")
        #expect(PeripheralRequestPolicy.read(Self.control, offset: 0, in: record, clientAttached: true) == .refuse(.readNotPermitted))
    }

    @Test func writesAreForwardedOnlyWhenSomeoneCanAnswer() {
        let record = Self.record
        func write(_ key: CharacteristicKey, _ response: Bool, _ attached: Bool, count: Int = 1, offset: Int = 0) -> PeripheralRequestPolicy.Write {
            PeripheralRequestPolicy.write(key, value: Array(repeating: 0, count: count), offset: offset, withResponse: response, in: record, clientAttached: attached)
        }
        #expect(write(Self.control, true, true) == .forward)
        #expect(write(Self.control, false, true) == .commitThenAccept)
        #expect(write(Self.control, true, false) == .commitThenAccept)
        #expect(write(Self.model, true, true) == .refuse(.writeNotPermitted))
        #expect(write(Self.level, true, true) == .refuse(.writeNotPermitted))
        #expect(write(Self.control, true, true, count: 513) == .refuse(.invalidAttributeValueLength))
    }

    @Test func anUpdateThatDoesNotFitIsRefusedAndReadyFollowsOnce() {
        var window = UpdateWindow(capacity: 2)
        let first = window.take(), second = window.take(), third = window.take()
        #expect(first && second && !third)
        let ready = window.sent(), again = window.sent()
        #expect(ready, "room after a refusal: tell the program")
        #expect(!again, "once per refusal")
        let fourth = window.take()
        #expect(fourth)
    }

    @Test func aPlaceGivenBackIsFreeAndOwesNoReady() {
        var window = UpdateWindow(capacity: 2)
        let first = window.take(), second = window.take()
        window.giveBack()
        #expect(first && second && window.inFlight == 1)
        let third = window.take(), fourth = window.take()
        #expect(third && !fourth, "the place given back was taken again, then the window is full")
        window.giveBack()
        let ready = window.sent()
        #expect(ready, "the refusal still owes a ready when an update goes out")
        window.giveBack()
        window.giveBack()
        #expect(window.inFlight == 0, "never below empty")
    }

    @Test func aRequestIsAnsweredOnceByItsOwnIdentifierOrExpires() {
        var pending = PendingRequests<Int>()
        let a = pending.add(identifier: "a", deadline: 10), b = pending.add(identifier: "b", deadline: 20)
        #expect(a != b && a != 0)
        #expect(pending.answer(a, by: "b") == nil, "another identifier's")
        #expect(pending.answer(a, by: "a") != nil)
        #expect(pending.answer(a, by: "a") == nil, "answered already")
        #expect(pending.expire(b, now: 19) == nil)
        #expect(pending.expire(b, now: 20) != nil)
        #expect(pending.count == 0)
    }

    @Test func publishingRefusesWhatBluetoothdOrCoreBluetoothWould() throws {
        func refused(_ json: String) -> Bool {
            do { try PublishedService.validate(PublishedService.list(json: json)); return false } catch { return true }
        }
        #expect(!refused(#"[{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": ["read"], "permissions": ["readable"]}]}]"#))
        #expect(refused(#"[{"uuid": "1801", "characteristics": []}]"#))
        #expect(refused(#"[{"uuid": "180f"}, {"uuid": "0000180f-0000-1000-8000-00805f9b34fb"}]"#), "the same UUID twice")
        #expect(refused(#"[{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": []}]}]"#))
        #expect(refused(#"[{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": ["broadcast"]}]}]"#))
        #expect(refused(#"[{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": ["notify"], "descriptors": [{"uuid": "2902", "value": [0, 0]}]}]}]"#))
        #expect(refused(#"[{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": ["read"], "permissions": ["readable"], "value": [1], "cacheable": true}]}]"#))
        #expect(refused(#"[{"uuid": "zz"}]"#))
        let ad = try PeripheralAdvertisement(json: #"{"localName": "Sensor", "serviceUUIDs": ["180f"]}"#)
        #expect(ad.encodedLength == 3 + 4 + 8)
        #expect(throws: DomainError.self) { try PeripheralAdvertisement(serviceUUIDs: [Self.service, Self.service]).validate() }
    }

    /// A key a JSON form does not have is refused, naming it and where it
    /// is, in every form and entry (a misspelt `localName` was dropped in
    /// silence: found by the hostile calls campaign, whose
    /// `StartAdvertising({"uuid": 5})` advertised).
    @Test func aKeyTheFormDoesNotHaveIsRefusedByName() throws {
        func reason(_ body: () throws -> Void) -> String {
            do { try body(); return "" } catch { return "\(error)" }
        }
        #expect(reason { _ = try PeripheralAdvertisement(json: #"{"locaName": "Sensor"}"#) }
                    == #"invalid peripheral role: not an advertisement: locaName: unknown key "locaName""#)
        #expect(reason { _ = try PeripheralAdvertisement(json: #"{"uuid": 5}"#) }.contains(#"unknown key "uuid""#))
        #expect(reason { _ = try PeripheralAdvertisement(json: #"{"manufacturerData": [{"company": 76, "data": [1], "x": 1}]}"#) }
                    .contains(#"manufacturerData.0.x: unknown key "x""#))
        #expect(reason { _ = try PeripheralAdvertisement(json: #"{"serviceData": [{"uuid": "180f", "dta": [1]}]}"#) }.contains(#"unknown key "dta""#))
        #expect(reason { _ = try PublishedService.list(json: #"[{"uuid": "180f", "primery": false}]"#) }.contains(#"unknown key "primery""#))
        #expect(reason { _ = try PublishedService.list(json: #"[{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": ["read"], "notify": true}]}]"#) }
                    .contains(#"unknown key "notify""#))
        #expect(reason { _ = try PublishedService.list(json: #"[{"uuid": "180f", "characteristics": [{"uuid": "2a19", "properties": ["read"], "descriptors": [{"uuid": "2901", "value": [1], "cacheable": true}]}]}]"#) }
                    .contains(#"unknown key "cacheable""#))
        #expect(reason { _ = try PeripheralAdvertisement(json: #"{"localName": "Sensor", "connectable": false}"#) } == "", "the known keys still read")
    }

    /// A broadcast (not connectable) advertisement is not discoverable
    /// unless asked, and asked it is refused, naming why: bluetoothd 5.66
    /// and 5.82 refuse a broadcast advertisement with the discoverable flag
    /// whole ("Broadcast cannot set flags"), and the default used to be
    /// discoverable, so `{"connectable": false}` advertised on the mock and
    /// failed on real bluetoothd (found with the bench's beacon, gateway
    /// finding G5). One stored before the refusal is advertised without it.
    @Test func aBroadcastAdvertisementIsNotDiscoverable() throws {
        let broadcast = try PeripheralAdvertisement(json: #"{"localName": "B", "connectable": false}"#)
        #expect(!broadcast.discoverable && !broadcast.advertisedDiscoverable)
        try broadcast.validate()
        #expect(broadcast.encodedLength == 2 + 1, "no flags: a broadcaster has none")
        #expect(try PeripheralAdvertisement(json: #"{"localName": "P"}"#).discoverable, "connectable: discoverable by default")
        #expect(!PeripheralAdvertisement(connectable: false).discoverable)
        let asked = try PeripheralAdvertisement(json: #"{"localName": "B", "connectable": false, "discoverable": true}"#)
        do {
            try asked.validate()
            Issue.record("a discoverable broadcast advertisement was accepted")
        } catch {
            #expect("\(error)".contains("cannot be discoverable"), "\(error)")
        }
        #expect(!asked.advertisedDiscoverable, "stored before the refusal: bluetoothd is not given the flag")
    }

    /// The advertisement's manufacturer data, service data and appearance are
    /// an `AdvertisingData` (one type for both roles); a record stored before
    /// that (phase 1, the same flat JSON keys) still reads, and is written back
    /// byte for byte.
    @Test func advertisementDataIsTheCentralRolesAdvertisingDataAndTheStoredFormReads() throws {
        let stored = #"{"advertisement":{"appearance":961,"connectable":true,"discoverable":true,"includeTxPower":false,"# +
            #""localName":"S","manufacturerData":[{"company":76,"data":[2,21]}],"# +
            #""serviceData":[{"data":[90],"uuid":"0000180f-0000-1000-8000-00805f9b34fb"}],"# +
            #""serviceUUIDs":["0000180f-0000-1000-8000-00805f9b34fb"]},"cachedValues":[],"services":[],"subscribers":[]}"#
        let record = try PeripheralManagerRecord(json: stored)
        let ad = try #require(record.advertisement)
        #expect(ad.data == AdvertisingData(manufacturerData: [76: [2, 21]], serviceData: [Self.service: [90]], appearance: 961))
        #expect(ad.localName == "S" && ad.serviceUUIDs == [Self.service])
        #expect(record.json == stored)
        try ad.validate()
        var withTx = ad
        withTx.data.txPower = 4
        #expect(throws: DomainError.self) { try withTx.validate() }
    }
}
