import Testing
@testable import Systemd

struct StallableProbeTests {
    @Test func passesTheWrappedResultThroughWhenNotStalled() async {
        #expect(await StallableProbe(wrapping: ClosureLivenessProbe { true }).check())
        #expect(await StallableProbe(wrapping: ClosureLivenessProbe { false }).check() == false)
    }

    @Test func stalledCheckHangsUntilResumedThenFails() async throws {
        let probe = StallableProbe(wrapping: ClosureLivenessProbe { true })
        probe.stall()
        #expect(probe.isStalled)
        let check = Task { await probe.check() }
        // A settle kept for want of a hook: nothing public shows the check
        // parked in its stall (Tests/README.md).
        try await Task.sleep(for: .milliseconds(100))
        probe.resume()
        // A check that hung past its moment reports failure; the next one passes.
        #expect(await check.value == false)
        #expect(await probe.check())
    }

    @Test func stalledCheckReturnsFalseWhenCancelled() async throws {
        let probe = StallableProbe(wrapping: ClosureLivenessProbe { true })
        probe.stall()
        let check = Task { await probe.check() }
        // A settle kept for want of a hook: nothing public shows the check
        // parked in its stall (Tests/README.md).
        try await Task.sleep(for: .milliseconds(50))
        check.cancel()
        #expect(await check.value == false)
        #expect(probe.isStalled)
    }

    @Test func cancelledBeforeWaitingDoesNotHang() async {
        let probe = StallableProbe(wrapping: ClosureLivenessProbe { true })
        probe.stall()
        let check = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await probe.check()
        }
        #expect(await check.value == false)
    }
}
