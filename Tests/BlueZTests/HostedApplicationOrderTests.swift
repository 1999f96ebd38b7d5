import DBus
import Testing
@testable import BlueZ
import RelinkModel

/// bluetoothd 5.66 adds a GATT application's services in the order of its
/// objects and fails an include of a service not added yet (seen on the
/// real-bluetoothd bench: the bench lock's included battery service was
/// missing on the central's side until it was published first).
@Suite struct HostedApplicationOrderTests {
    let lock = BluetoothUUID(shortValue: 0xFFF0)
    let battery = BluetoothUUID(shortValue: 0x180F)
    let info = BluetoothUUID(shortValue: 0x180A)

    @Test func anIncludedServiceIsExportedBeforeTheServiceThatIncludesIt() throws {
        let services = [PublishedService(uuid: lock, includedServices: [battery]),
                        PublishedService(uuid: info),
                        PublishedService(uuid: battery, isPrimary: false)]
        let app = HostedApplication(root: try ObjectPath("/relink/hosted/door"), services: services, advertisement: nil)
        #expect(app.services.map(\.uuid) == [battery, lock, info])
        #expect(app.servicePath(0).description == "/relink/hosted/door/service000")
    }

    @Test func publishedOrderIsKeptWithoutIncludesAndACycleEndsOnce() {
        #expect(HostedApplication.includedFirst([PublishedService(uuid: lock), PublishedService(uuid: info)]).map(\.uuid) == [lock, info])
        let cycle = HostedApplication.includedFirst([PublishedService(uuid: lock, includedServices: [info]),
                                                     PublishedService(uuid: info, includedServices: [lock])])
        #expect(cycle.map(\.uuid) == [info, lock])
    }

    @Test func tenServicesSortByPathInExportOrder() throws {
        let services = (0..<12).map { PublishedService(uuid: BluetoothUUID(shortValue: UInt32(0xFF00 + $0))) }
        let app = HostedApplication(root: try ObjectPath("/relink/hosted/hub"), services: services, advertisement: nil)
        let paths = (0..<12).map { app.servicePath($0) }
        #expect(paths == paths.sorted { $0 < $1 })
    }
}
