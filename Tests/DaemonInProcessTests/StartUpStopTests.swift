import BlueZFake
import Foundation
import Logging
@testable import RelinkDaemon
import RelinkStore
import Synchronization
import Testing

/// A stop (SIGTERM) during start-up ends it where it is (issue 37,
/// campaign 4): once the store is restored, start-up neither goes on to
/// register the peripheral role's applications with bluetoothd (a call to
/// bluetoothd each) nor becomes ready. Before the fix, publishing the
/// objects and hosting went on regardless; at 10,000 intents that took a
/// stop over 100 ms.
@Suite("Daemon in-process: a stop during start-up")
struct StartUpStopTests {
    @Test func aStopOnceTheStoreIsRestoredHostsNothingAndIsNeverReady() async throws {
        let fake = FakeBlueZ()
        let directory = try InProcessDaemon.temporaryDirectory()
        let first = try await PeripheralRoleTests.published(fake, directory: directory)
        try await eventually("hosted") { await fake.hostingCallCount > 0 }
        await first.stop()
        let hostedBefore = await fake.hostingCallCount

        let store = try RelinkStore(directory: directory, logger: Logger(label: "relinkd.inprocess"))
        defer { try? store.close() }
        let daemon = try Daemon(bluez: fake, store: store, adapter: "hci0", logger: Logger(label: "relinkd.inprocess"))
        let steps = Mutex<[Daemon.StartUpStep]>([]), ready = Atomic<Bool>(false)
        let run = Task {
            async let bluetoothd: Void = fake.run()
            try await daemon.run(onStartUpStep: { step in
                steps.withLock { $0.append(step) }
                // The SIGTERM comes here: the run's task is cancelled, as relinkd's service is.
                if step == .storeRestored { withUnsafeCurrentTask { $0?.cancel() } }
            }, onReady: { _ in ready.store(true, ordering: .relaxed) })
            try await bluetoothd
        }
        _ = try? await run.value
        await fake.clientLeftBus()
        #expect(steps.withLock { $0 } == [.bluetoothdRead, .storeRestored])
        #expect(await fake.hostingCallCount == hostedBefore, "nothing registered with bluetoothd after the stop")
        let becameReady = ready.load(ordering: .relaxed)
        #expect(!becameReady)
    }
}
