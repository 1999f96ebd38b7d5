import Foundation
@testable import RelinkStore
import Testing
import RelinkModel

/// Migration v8: launch specs are durable, replaced, removed, and go with
/// their identifier.
@Suite("Launch specs in the store")
struct LaunchSpecStoreTests {
    @Test("a launch spec reads back after reopening; nil removes it; removing the identifier removes it")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let door = try Fixtures.id("front-door"), band = try Fixtures.id("band")
        let spec = LaunchSpec(busName: "org.example.Lock", wakeOn: ["value-notified", "connected", "value-notified"])
        do {
            let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
            try await store.apply([
                .putIdentifier(try RestoreIdentifierRecord(id: door, ownerUID: 1000, createdAt: Fixtures.now)),
                .putIdentifier(try RestoreIdentifierRecord(id: band, ownerUID: 1000, createdAt: Fixtures.now)),
                .putLaunchSpec(door, spec), .putLaunchSpec(band, LaunchSpec(busName: "org.example.Band")),
            ])
            try store.close()
        }
        let store = try RelinkStore(directory: directory.path, logger: LogCapture().logger)
        defer { try? store.close() }
        let loaded = try await store.launchSpecs()
        #expect(loaded.specs == [door: spec, band: LaunchSpec(busName: "org.example.Band")] && loaded.unreadable.isEmpty)
        #expect(loaded.specs[door]?.wakeOn == ["connected", "value-notified"], "sorted, once each")
        try await store.apply([.putLaunchSpec(door, nil), .removeIdentifier(band)])
        #expect(try await store.launchSpecs().specs.isEmpty)
        await #expect(throws: StoreError.self) { try await store.apply([.putLaunchSpec(try Fixtures.id("nobody"), spec)]) }
    }
}
