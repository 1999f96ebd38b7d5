import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
import Testing

/// Encrypted characteristics and descriptors of the peripheral role
/// (issue 24): permissions by CoreBluetooth's names or BlueZ's flags
/// become BlueZ's `encrypt-*`, `encrypt-authenticated-*` and `secure-*`
/// flags on the hosted objects, are kept and registered again after a
/// relinkd restart, and contradictions are refused with a typed error
/// before anything is published.
@Suite("Daemon in-process: peripheral role security")
struct PeripheralSecurityTests {
    typealias P = PeripheralRoleTests
    static let service = BluetoothUUID(high: 0x8e7f_3a00_4b2c_4d1e, low: 0x9a3f_7265_6c69_6e6b)

    /// A secret (read over an encrypted link, by BlueZ's flag name), a
    /// PIN (written over an authenticated link), an alarm (notified over
    /// Secure Connections only) with a descriptor readable when encrypted.
    static let json = """
        {"uuid": "\(service.string)", "characteristics": [
          {"uuid": "2a3d", "properties": ["read"], "permissions": ["encrypt-read"]},
          {"uuid": "2a3e", "properties": ["write"], "permissions": ["writeAuthenticationRequired"]},
          {"uuid": "2a3f", "properties": ["read", "notify"], "permissions": ["readable", "notifySecureConnectionsRequired"],
           "descriptors": [{"uuid": "2901", "value": [65], "permissions": ["readEncryptionRequired"]}]}]}
        """

    static func flags(_ services: [PublishedService]) -> [[String]] {
        services.flatMap(\.characteristics).map(\.bluezFlags) + services.flatMap(\.characteristics).flatMap(\.descriptors).map(\.bluezFlags)
    }

    static let expected = [["read", "encrypt-read"], ["write", "encrypt-authenticated-write"], ["read", "notify", "secure-notify"], ["read", "encrypt-read"]]

    @Test func securityPermissionsBecomeBlueZFlagsAndOutliveARestart() async throws {
        let fake = FakeBlueZ()
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await InProcessDaemon(fake: fake, directory: directory)
        _ = try await P.register(first)
        _ = try await P.call(first, .addService(try PublishedService(json: Self.json)))
        #expect(Self.flags(await fake.hostedServices(P.root)) == Self.expected)
        await first.stop()

        let second = try await InProcessDaemon(fake: fake, directory: directory)
        #expect(await fake.isApplicationRegistered(P.root), "registered again by relinkd itself")
        #expect(Self.flags(await fake.hostedServices(P.root)) == Self.expected, "the same flags after the restart")
        let restored = try await P.register(second)
        guard case .string(let text)? = restored["peripheral_manager"] else { Issue.record("no peripheral_manager"); return }
        #expect(try PeripheralManagerRecord(json: text).services == [try PublishedService(json: Self.json)])
        await second.stop()
    }

    @Test(arguments: [
        #"{"uuid": "2a3d", "properties": ["read"], "permissions": ["readEncryptionRequired", "secure-read"]}"#,
        #"{"uuid": "2a3d", "properties": ["write"], "permissions": ["encrypt-write", "writeAuthenticationRequired"]}"#,
        #"{"uuid": "2a3d", "properties": ["read"], "permissions": ["readable", "notifyAuthenticationRequired"]}"#,
        #"{"uuid": "2a3d", "properties": ["notifyEncryptionRequired"], "permissions": ["notifySecureConnectionsRequired"]}"#,
        #"{"uuid": "2a3d", "properties": ["read"], "permissions": ["readable"], "descriptors": [{"uuid": "2901", "value": [1], "permissions": ["writeable"]}]}"#,
        #"{"uuid": "2a3d", "properties": ["read"], "permissions": ["readable"], "descriptors": [{"uuid": "2901", "value": [1], "permissions": ["encrypt-read", "secure-read"]}]}"#,
    ])
    func contradictionsAreRefusedWithATypedErrorAndNothingIsPublished(characteristic: String) async throws {
        let fake = FakeBlueZ()
        let d = try await InProcessDaemon(fake: fake, directory: try InProcessDaemon.temporaryDirectory())
        _ = try await P.register(d)
        let service = #"{"uuid": "\#(Self.service.string)", "characteristics": [\#(characteristic)]}"#
        do {
            _ = try await P.call(d, .addService(try PublishedService(json: service)))
            Issue.record("published \(characteristic)")
        } catch let error as RelinkError {
            #expect(error.code == .invalidArguments, "\(error)")
        } catch {
            Issue.record("refused while parsing, not by the published service's rules: \(error)")
        }
        #expect(await fake.hostedServices(P.root).isEmpty)
        await d.stop()
    }

    @Test func anUnknownSecurityNameIsRefusedNamingTheKnownOnes() {
        #expect(throws: DomainError.self) { try AttributePermissions(names: ["encrypt-everything"]) }
        #expect((try? AttributePermissions(names: ["secure-write"])) == .writeSecureConnectionsRequired)
    }
}
