import Foundation
import RelinkStore
import Testing
@testable import RelinkDaemon

/// Outcomes of commits in flight reach the loop in submission order, and a
/// call can wait for every commit up to a ticket.
@Suite struct CommitPipelineTests {
    func commit(_ n: Int64) -> Result<StoreCommit, StoreError> {
        .success(StoreCommit(appendedSequences: [n]))
    }

    func sequences(_ taken: [(UInt64, Result<StoreCommit, StoreError>)]) -> [UInt64] { taken.map(\.0) }

    @Test func outcomesBecomeReadyInTicketOrderWhateverOrderTheyArriveIn() {
        let pipeline = CommitPipeline()
        let tickets = (0..<4).map { _ in pipeline.issue() }
        #expect(tickets == [1, 2, 3, 4])
        #expect(pipeline.lastIssued == 4)
        #expect(!pipeline.finish(2, commit(2)), "2 cannot be ready before 1")
        #expect(pipeline.take().isEmpty)
        #expect(pipeline.finish(1, commit(1)), "1 and 2 are ready: tell the loop")
        #expect(!pipeline.finish(4, commit(4)), "4 waits for 3, and the loop was already told")
        #expect(sequences(pipeline.take()) == [1, 2])
        #expect(pipeline.finish(3, .failure(.closed)), "told again after a take")
        let rest = pipeline.take()
        #expect(sequences(rest) == [3, 4])
        if case .failure(.closed) = rest[0].1 {} else { Issue.record("the failure kept its ticket: \(rest)") }
    }

    @Test func aWaiterResumesOnlyWhenEveryTicketUpToItsOwnIsDone() async {
        let pipeline = CommitPipeline()
        for _ in 0..<3 { _ = pipeline.issue() }
        let resumed = Resumed()
        let waiter = Task {
            await pipeline.wait(through: 2)
            await resumed.set()
        }
        _ = pipeline.finish(2, commit(2))
        _ = pipeline.finish(3, commit(3))
        // 1 is still on the disk: the waiter must not have resumed. Give it
        // every chance to run first.
        for _ in 0..<50 { await Task.yield() }
        #expect(await !resumed.value)
        _ = pipeline.finish(1, commit(1))
        await waiter.value
        #expect(await resumed.value)
        // Already done: returns at once.
        await pipeline.wait(through: 3)
    }
}

private actor Resumed {
    var value = false
    func set() { value = true }
}
