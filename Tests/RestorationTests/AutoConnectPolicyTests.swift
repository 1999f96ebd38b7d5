import RelinkModel
import Restoration
import Testing

@Suite("Background auto-connect policy")
struct AutoConnectPolicyTests {
    static let lock = (try? BluetoothAddress(parsing: "00:00:00:00:00:02")) ?? { fatalError("valid") }()
    static let band = (try? BluetoothAddress(parsing: "00:00:00:00:00:03")) ?? { fatalError("valid") }()
    static let lockService = BluetoothUUID(shortValue: 0xFFF0)
    static let heartRate = BluetoothUUID(shortValue: 0x180D)

    @Test func requestsOfOneInputAreGatheredIntoOneRegistration() {
        var policy = AutoConnectPolicy()
        policy.hold(Self.lock, services: [Self.lockService])
        policy.hold(Self.band, services: [Self.heartRate])
        let first = policy.takeRenewal(), second = policy.takeRenewal()
        #expect(first && !second, "one registration for both")
    }

    @Test func anIntentWithoutServicesIsHeldByItsSubscriptions() {
        var policy = AutoConnectPolicy()
        policy.hold(Self.lock, services: [])
        policy.hold(Self.band, services: [Self.heartRate])
        let services = policy.services { $0 == Self.lock ? [Self.lockService] : [] }
        #expect(services == [Self.lockService, Self.heartRate])
    }

    @Test func aRegistrationIsNeededWhenTheServicesChangeOrAnewOnRenewal() {
        var policy = AutoConnectPolicy()
        #expect(policy.registration(for: [], renew: true) == nil, "nothing held, nothing registered")
        let uuids = policy.registration(for: [Self.heartRate], renew: false)
        #expect(uuids == [Self.heartRate.string])
        policy.didRegister(uuids ?? [])
        #expect(policy.registration(for: [Self.heartRate], renew: false) == nil, "unchanged")
        #expect(policy.registration(for: [Self.heartRate], renew: true) == [Self.heartRate.string], "bluetoothd may have forgotten it")
        #expect(policy.registration(for: [], renew: false) == [], "the last hold gone: registered empty")
    }

    @Test func devicesNoIntentWantsAreReleasedAfterARegistration() {
        var policy = AutoConnectPolicy()
        #expect(!policy.covers([Self.heartRate.string]), "nothing registered")
        policy.didRegister([Self.heartRate.string])
        #expect(policy.covers([Self.heartRate.string.uppercased()]))
        #expect(!policy.covers([Self.lockService.string]))
        #expect(AutoConnectPolicy.unwanted(["B", "A", "C"], wanted: ["B"]) == ["A", "C"])
        policy.hold(Self.lock, services: [])
        policy.release(Self.lock)
        #expect(!policy.isHeld(Self.lock))
    }
}
