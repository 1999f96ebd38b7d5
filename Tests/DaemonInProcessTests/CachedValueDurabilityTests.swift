import BlueZ
import BlueZFake
import DBus
import Foundation
import RelinkAPI
@testable import RelinkDaemon
import RelinkModel
@testable import RelinkStore
import Restoration
import Testing

/// The value relinkd keeps for a `cacheable` characteristic is committed
/// before `UpdateValue`, `UpdateValues` or a read's `Respond` is answered
/// (issue 37's kill campaign found acknowledged values lost: relinkd was
/// SIGKILLed between the reply and the commit that came after it). A store
/// that refuses writes makes the order visible: the call fails
/// `StoreFailed` and nothing is kept or sent.
@Suite("Daemon in-process: a cached value kept before the reply")
struct CachedValueDurabilityTests {
    typealias P = PeripheralRoleTests

    static func kept(_ d: InProcessDaemon) async throws -> [UInt8]? {
        let restored = try await P.register(d)
        guard case .string(let json)? = restored["peripheral_manager"] else { return nil }
        return try PeripheralManagerRecord(json: json).cachedValues[P.level]
    }

    static func code(_ d: InProcessDaemon, _ request: PeripheralManagerRequest) async -> RelinkErrorName? {
        do {
            _ = try await P.call(d, request)
            return nil
        } catch { return error.code }
    }

    @Test func anUpdateWhoseValueCannotBeKeptIsRefusedAndNothingIsSent() async throws {
        let fake = FakeBlueZ()
        let directory = try InProcessDaemon.temporaryDirectory()
        let d = try await P.published(fake, directory: directory)
        #expect(await fake.remoteSubscribe(P.root, P.level) == .done)
        #expect(await Self.code(d, .updateValue(P.level, [1])) == nil)
        try await eventually("the first update sent") { await fake.received(P.root, P.level) == [[1]] }

        try d.store.setQueryOnlyForTesting(true)
        #expect(await Self.code(d, .updateValue(P.level, [2])) == .storeFailed)
        #expect(await Self.code(d, .updateValues(P.level, [[3], [4]])) == .storeFailed)
        try d.store.setQueryOnlyForTesting(false)
        #expect(try await Self.kept(d) == [1])

        // The refused updates gave their places back, and were never sent.
        for value: UInt8 in 5...20 { #expect(await Self.code(d, .updateValue(P.level, [value])) == nil) }
        try await eventually("every accepted update sent, in order") {
            await fake.received(P.root, P.level) == [[1]] + (5...20).map { [$0] }
        }
        // Acknowledged is kept: a new relinkd on the same store has it.
        await d.stop()
        let again = try await InProcessDaemon(fake: fake, directory: directory)
        #expect(try await Self.kept(again) == [20])
        await again.stop()
    }

    @Test func aReadAnsweredWhileTheStoreRefusesGoesToTheCentralAndSaysItWasNotKept() async throws {
        let fake = FakeBlueZ()
        let d = try await P.published(fake)
        let read = Task { await fake.remoteRead(P.root, P.level) }
        let number = try await P.waitingRequest(d)
        try d.store.setQueryOnlyForTesting(true)
        #expect(await Self.code(d, .respond(number, [42])) == .storeFailed)
        #expect(await read.value == .value([42]), "the central is answered all the same")
        try d.store.setQueryOnlyForTesting(false)
        #expect(try await Self.kept(d) == nil)
        await d.stop()
    }
}
